import type { ManagementClient } from '../../lib/rabbitmq/management';

/**
 * Waits until the management listing shows every queue with at least `ready` messages: its
 * counts lag about 5 s, and a pass only looks at staging queues the listing shows non-empty.
 */
export async function waitForListing(
  management: ManagementClient,
  queues: readonly string[],
  ready: number,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const listed = new Map((await management.listQueues()).map((q) => [q.name, q.messages_ready]));
    if (queues.every((name) => (listed.get(name) ?? 0) >= ready)) return;
    if (Date.now() > deadline)
      throw new Error(
        `The management listing did not show ${ready} messages in ${queues.length} queues within ${timeoutMs} ms`,
      );
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
