import { parseStagingQueueName } from '../queues/staging-names';
import type { QueueInfo } from '../rabbitmq/management';

/** A target with the staging queues that, by the management listing, hold messages. */
export interface TargetGroup {
  target: string;
  /** The target as listed, or undefined if the listing has no queue of that name. */
  targetQueue?: QueueInfo;
  /** Names of its staging queues the listing shows with ready messages (or all, see groupByTarget), in name order. */
  staging: string[];
}

/**
 * Groups one management listing by target. Pure. The staging queues of `listedEmptyToo` are kept
 * whatever their listed count (a requested pass reads them all). The listing's counts lag about 5 s, so they
 * only decide which staging queues are worth a look: the pass reads exact depths over AMQP.
 */
export function groupByTarget(queues: readonly QueueInfo[], listedEmptyToo?: string): TargetGroup[] {
  const byName = new Map(queues.map((q) => [q.name, q]));
  const groups = new Map<string, TargetGroup>();
  for (const queue of queues) {
    const target = parseStagingQueueName(queue.name)?.target;
    if (target === undefined || (queue.messages_ready <= 0 && target !== listedEmptyToo)) continue;
    let group = groups.get(target);
    if (!group) {
      group = { target, targetQueue: byName.get(target), staging: [] };
      groups.set(target, group);
    }
    group.staging.push(queue.name);
  }
  for (const group of groups.values()) group.staging.sort();
  return [...groups.values()].sort((a, b) => (a.target < b.target ? -1 : 1));
}
