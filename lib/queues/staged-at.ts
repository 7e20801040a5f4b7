/**
 * The header the router stamps on a message it stages: the epoch ms it published it to its staging
 * queue. The distributor measures the message's wait in staging from it when it moves the message,
 * and takes it off again, so the worker sees the message as it was routed.
 */
export const STAGED_AT_HEADER = 'x-fairway-staged-at';

type Headers = Record<string, unknown>;

/** The headers of a staged copy: the message's own, and when it was staged (a stale stamp is replaced). */
export function stampStagedAt(headers: Headers | undefined, at: number): Headers {
  return { ...headers, [STAGED_AT_HEADER]: at };
}

/**
 * When a message was staged, and its headers without the stamp. A message routed before the stamp
 * existed, or with a value that is not an epoch ms, has no `stagedAt`: its wait is not measured.
 */
export function takeStagedAt(headers: Headers | undefined): { stagedAt?: number; headers: Headers | undefined } {
  if (headers === undefined || !Object.hasOwn(headers, STAGED_AT_HEADER)) return { headers };
  const { [STAGED_AT_HEADER]: stamp, ...rest } = headers;
  return typeof stamp === 'number' && Number.isSafeInteger(stamp) && stamp > 0
    ? { stagedAt: stamp, headers: rest }
    : { headers: rest };
}
