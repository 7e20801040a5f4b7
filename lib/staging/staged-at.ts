/**
 * The router's stamp on a message it stages: when it published it to its staging queue. The
 * distributor measures the message's wait in staging from it when it moves the message, and takes
 * it off again, so the worker gets the headers the sender sent, every one of them.
 *
 * The stamp is the header `x-fairway-staged-at` holding a table `{ at, sent? }`: `at` the epoch ms
 * as an AMQP timestamp field, `sent` the sender's own value of that header, if any. A sender cannot
 * write a timestamp field (event headers are JSON and refuse amqplib's `!` type marker, task
 * attributes are strings, numbers and bytes), so a value the router did not write is never read as
 * a stamp: it is the sender's header, delivered as it came, and the message's wait is not measured.
 */
export const STAGED_AT_HEADER = 'x-fairway-staged-at';

type Headers = Record<string, unknown>;

/** amqplib's notation for a timestamp field, as it encodes and decodes one. */
interface TimestampField {
  '!': 'timestamp';
  value: number;
}

/** The stamp's table; `sent` is present exactly when the sender had a header of the stamp's name. */
interface Stamp {
  at: TimestampField;
  sent?: unknown;
}

/** The headers of a staged copy: the message's own, with the stamp (the sender's value of its name kept inside it). */
export function stampStagedAt(headers: Headers | undefined, at: number): Headers {
  const stamp: Stamp = { at: { '!': 'timestamp', value: at } };
  if (headers !== undefined && Object.hasOwn(headers, STAGED_AT_HEADER)) stamp.sent = headers[STAGED_AT_HEADER];
  return { ...headers, [STAGED_AT_HEADER]: stamp };
}

/**
 * The stamped headers as they encode, for measuring them against AMQP's limits (which refuse the
 * `!` marker in a sender's headers): the timestamp as an int64, the same 9 bytes.
 */
export function stampedForSizing(stamped: Headers): Headers {
  const stamp = stamped[STAGED_AT_HEADER] as Stamp;
  return { ...stamped, [STAGED_AT_HEADER]: { ...stamp, at: stamp.at.value } };
}

/**
 * When a message was staged, and the headers its sender sent. Headers without the router's stamp
 * (routed before it, or too large to take it) come back as they are, with no `stagedAt`.
 */
export function takeStagedAt(headers: Headers | undefined): { stagedAt?: number; headers: Headers | undefined } {
  const stamp = headers?.[STAGED_AT_HEADER];
  if (headers === undefined || !isStamp(stamp)) return { headers };
  const { [STAGED_AT_HEADER]: _stamp, ...rest } = headers;
  // The sender's value back in its place, or the header gone.
  const sent = Object.hasOwn(stamp, 'sent') ? { ...headers, [STAGED_AT_HEADER]: stamp.sent } : rest;
  return { stagedAt: stamp.at.value, headers: sent };
}

function isStamp(value: unknown): value is Stamp {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Buffer.isBuffer(value)) return false;
  const keys = Object.keys(value);
  if (!keys.includes('at') || keys.some((key) => key !== 'at' && key !== 'sent')) return false;
  const at = (value as { at: unknown }).at;
  if (typeof at !== 'object' || at === null) return false;
  const field = at as Record<string, unknown>;
  return field['!'] === 'timestamp' && typeof field.value === 'number' && Number.isSafeInteger(field.value);
}
