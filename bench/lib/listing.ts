import type { ManagementClient } from '../../lib/rabbitmq/management';

/**
 * Waits until the management listing shows every queue of `expected` with exactly its ready
 * count (queues not named may show anything): its counts lag about 5 s, and a pass only looks at
 * the staging queues the listing shows non-empty. Every run of a bench, Fairway's and the
 * baselines', starts after this, so none starts on a broker still busy with the last fill.
 */
export async function waitForListing(
  management: ManagementClient,
  expected: ReadonlyMap<string, number>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const listed = new Map((await management.listQueues()).map((q) => [q.name, q.messages_ready]));
    if ([...expected].every(([name, ready]) => (listed.get(name) ?? 0) === ready)) return;
    if (Date.now() > deadline)
      throw new Error(`The management listing did not settle on the ${expected.size} queues within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Each of `queues` holding `ready` messages. */
export const holding = (queues: readonly string[], ready: number): Map<string, number> =>
  new Map(queues.map((name) => [name, ready]));
