import { InvalidEventError } from '../platform/errors';
import { isDotSegment } from '../rabbitmq/management';

/**
 * Staging queue names (SPEC §2): `target»/tenant/workflow`, the reference implementation's
 * format (MessageRouter.LOAD_BALANCED_INDICATOR and its queue name mutators). The router builds
 * them; the distributor parses them back.
 */
export const STAGING_SEPARATOR = '»';
export const DISCRIMINATOR_SEPARATOR = '/';
/** RabbitMQ refuses longer queue names (a shortstr), counted in UTF-8 bytes. */
export const MAX_QUEUE_NAME_BYTES = 255;

/** What the mutators read: the target and the ids the event carried. */
export interface StagingKey {
  target: string;
  /** Absent for a tenant-less message (ROUTER_MISSING_TENANT=route): it is routed by its workflow alone. */
  tenantId?: string;
  workflowName?: string;
}

/**
 * One link of the name chain: returns the discriminator it adds, or undefined to add none.
 * `field` names the event field it reads, for errors. Extend the chain with your own.
 */
export interface QueueNameMutator<K extends StagingKey = StagingKey> {
  readonly field: string;
  discriminator(key: K): string | undefined;
}

// An empty id adds nothing, as upstream's mutators skip a null or empty one.
export const tenantMutator: QueueNameMutator = { field: 'tenantId', discriminator: (key) => key.tenantId || undefined };
export const workflowMutator: QueueNameMutator = {
  field: 'workflowName',
  discriminator: (key) => key.workflowName || undefined,
};
export const defaultMutators: readonly QueueNameMutator[] = [tenantMutator, workflowMutator];

/** Where a message goes: its staging queue, or its target when no mutator adds a discriminator. */
export interface StagingDestination {
  queue: string;
  /**
   * Set when the full name would pass RabbitMQ's 255 bytes: `discriminators-dropped` when trailing
   * discriminators (workflow first) were left out to fit, `target` when not even the first fits
   * and the message goes straight to its target, as upstream keeps the original name.
   */
  shortened?: 'discriminators-dropped' | 'target';
}

/**
 * The staging queue for `key`: target, `»`, then `/`+discriminator per mutator that adds one;
 * the target itself when none does. An id that would break the scheme is rejected, never
 * rewritten, so that a message cannot land in another tenant's queue. A name longer than
 * RabbitMQ allows drops discriminators from the end until it fits (a tenant keeps its own queue
 * when only its workflow was too long), else it is the target (`shortened` says which).
 */
export function stagingDestination<K extends StagingKey>(
  key: K,
  mutators: readonly QueueNameMutator<K>[] = defaultMutators,
): StagingDestination {
  checkTargetName(key.target);
  const used = mutators.flatMap((mutator) => {
    const value = mutator.discriminator(key);
    if (value === undefined) return [];
    checkDiscriminator(mutator.field, value);
    return [value];
  });
  if (used.length === 0) return { queue: key.target };
  if (key.target.startsWith('amq.')) {
    throw new InvalidEventError('target', 'names starting with "amq." are reserved by RabbitMQ and cannot be staged');
  }
  for (let kept = used.length; kept > 0; kept--) {
    const name =
      key.target +
      STAGING_SEPARATOR +
      used
        .slice(0, kept)
        .map((u) => DISCRIMINATOR_SEPARATOR + u)
        .join('');
    if (Buffer.byteLength(name, 'utf8') <= MAX_QUEUE_NAME_BYTES) {
      return kept === used.length ? { queue: name } : { queue: name, shortened: 'discriminators-dropped' };
    }
  }
  return { queue: key.target, shortened: 'target' };
}

/** The name `stagingDestination` gives `key`. */
export function stagingQueueName<K extends StagingKey>(
  key: K,
  mutators: readonly QueueNameMutator<K>[] = defaultMutators,
): string {
  return stagingDestination(key, mutators).queue;
}

/** A target queue name must be usable as is and must not look like a staging queue. */
export function checkTargetName(target: string, field = 'target'): void {
  if (target.length === 0) throw new InvalidEventError(field, 'must not be empty');
  if (isDotSegment(target)) {
    throw new InvalidEventError(field, 'must not be "." or ".." (the management API cannot address such a queue)');
  }
  if (target.includes(STAGING_SEPARATOR)) {
    throw new InvalidEventError(field, `must not contain "${STAGING_SEPARATOR}" (it would name a staging queue)`);
  }
  const bytes = Buffer.byteLength(target, 'utf8');
  if (bytes > MAX_QUEUE_NAME_BYTES) {
    throw new InvalidEventError(field, `is ${bytes} bytes; RabbitMQ allows at most ${MAX_QUEUE_NAME_BYTES}`);
  }
}

/** A tenant id, workflow name or other discriminator must be non-empty and free of the separators. */
export function checkDiscriminator(field: string, value: string): void {
  if (value.length === 0) throw new InvalidEventError(field, 'must not be empty');
  for (const reserved of [STAGING_SEPARATOR, DISCRIMINATOR_SEPARATOR]) {
    if (value.includes(reserved)) {
      throw new InvalidEventError(
        field,
        `must not contain "${reserved}" (it separates the parts of a staging queue name)`,
      );
    }
  }
}

export interface StagingQueueParts {
  target: string;
  tenant?: string;
  workflow?: string;
  /** Every discriminator in order (tenant, workflow, then any a longer chain added). */
  discriminators: string[];
}

/**
 * The inverse of `stagingQueueName`: undefined for a name that is not a staging queue (no `»`,
 * or nothing before it). Also reads the slash-less `target»tenant` of the reference's tests.
 */
export function parseStagingQueueName(name: string): StagingQueueParts | undefined {
  const at = name.indexOf(STAGING_SEPARATOR);
  if (at <= 0) return undefined;
  const target = name.slice(0, at);
  const rest = name.slice(at + STAGING_SEPARATOR.length);
  const path = rest.startsWith(DISCRIMINATOR_SEPARATOR) ? rest.slice(DISCRIMINATOR_SEPARATOR.length) : rest;
  const discriminators = path === '' ? [] : path.split(DISCRIMINATOR_SEPARATOR);
  const [tenant, workflow] = discriminators;
  return {
    target,
    ...(tenant ? { tenant } : {}),
    ...(workflow ? { workflow } : {}),
    discriminators,
  };
}

/**
 * Where the distributor parks a target's messages the broker would refuse to take from it. No
 * `»` in the name, so discovery never takes it for a staging queue and moves it back.
 */
export const parkingQueueName = (target: string) => `fairway-parked:${target}`;

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
