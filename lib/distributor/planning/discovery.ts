import type { QueueInfo } from '../../rabbitmq/management';
import { parseStagingQueueName } from '../../staging/staging-names';

/** A target with the staging queues that, by the management listing, hold messages. */
export interface TargetGroup {
  target: string;
  /** The target as listed, or undefined if the listing has no queue of that name. */
  targetQueue?: QueueInfo;
  /** Names of its staging queues the listing shows with ready messages (or all, see groupByTarget), in name order. */
  staging: string[];
  /** Body bytes of a message in those staging queues, on average as listed (0 when the listing has no bytes). */
  stagedMessageBytes: number;
  /** Body bytes of a message per staging queue, on average as listed (queues listed with bytes only). */
  queueBytes?: Record<string, number>;
}

/**
 * Groups one management listing by target. Pure. The staging queues of the `listedEmptyToo` targets
 * are kept whatever their listed count (a pass asked for them reads them all). The listing's counts lag about 5 s, so they
 * only decide which staging queues are worth a look: the pass reads exact depths over AMQP.
 */
export function groupByTarget(
  queues: readonly QueueInfo[],
  listedEmptyToo: ReadonlySet<string> = new Set(),
): TargetGroup[] {
  const byName = new Map(queues.map((q) => [q.name, q]));
  const groups = new Map<string, TargetGroup>();
  for (const queue of queues) {
    const target = parseStagingQueueName(queue.name)?.target;
    if (target === undefined || (queue.messages_ready <= 0 && !listedEmptyToo.has(target))) continue;
    let group = groups.get(target);
    if (!group) {
      group = { target, targetQueue: byName.get(target), staging: [], stagedMessageBytes: 0 };
      groups.set(target, group);
    }
    group.staging.push(queue.name);
  }
  for (const group of groups.values()) {
    group.staging.sort();
    const listed = group.staging.map((name) => byName.get(name)!);
    const messages = listed.reduce((n, q) => n + q.messages_ready, 0);
    const bytes = listed.reduce((n, q) => n + (q.message_bytes_ready ?? 0), 0);
    group.stagedMessageBytes = messages > 0 ? bytes / messages : 0;
    const sized = listed.filter((q) => q.messages_ready > 0 && (q.message_bytes_ready ?? 0) > 0);
    if (sized.length > 0) group.queueBytes = Object.fromEntries(sized.map((q) => [q.name, averageBytes(q)]));
  }
  return [...groups.values()].sort((a, b) => (a.target < b.target ? -1 : 1));
}

const averageBytes = (q: QueueInfo) => (q.message_bytes_ready ?? 0) / q.messages_ready;
