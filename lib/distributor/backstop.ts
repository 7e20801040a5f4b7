import type { QueueInfo } from '../rabbitmq/management';
import { parseStagingQueueName } from '../staging/staging-names';
import type { StagingRegistry } from '../staging/staging-registry';
import type { DynamoWorkBoard } from '../work-board/work-board-store';
import type { DistributorReport } from './report';

/** One listing's staging queues by target (each in listing order); other queues are left out. */
export type StagingQueuesByTarget = ReadonlyMap<string, readonly QueueInfo[]>;

/** Groups a vhost listing's staging queues by target. Pure. */
export function stagingQueuesByTarget(listing: readonly QueueInfo[]): StagingQueuesByTarget {
  const byTarget = new Map<string, QueueInfo[]>();
  for (const queue of listing) {
    const target = parseStagingQueueName(queue.name)?.target;
    if (target === undefined) continue;
    byTarget.set(target, [...(byTarget.get(target) ?? []), queue]);
  }
  return byTarget;
}

/**
 * The reaper of idle staging queues (docs/router.md "Staging-queue lifecycle",
 * reaping/reaper.ts `backstopReaper`), given each backstop listing grouped by target.
 */
export type ReapIdleStagingQueues = (byTarget: StagingQueuesByTarget, nowMs: number) => Promise<void>;

export interface BackstopDeps {
  board: Pick<DynamoWorkBoard, 'takeListing' | 'request'>;
  /** One listing of the vhost (ManagementClient.listQueues). */
  listQueues: () => Promise<QueueInfo[]>;
  /** Where staging queues made elsewhere are recorded; without it the passes list the vhost themselves. */
  registry?: Pick<StagingRegistry, 'queuesOf' | 'touch'>;
  reapIdleStagingQueues?: ReapIdleStagingQueues;
  /** The backstop lists at most this often over every execution. */
  intervalMs: number;
  report: Pick<DistributorReport, 'backstopListed'>;
  now?: () => number;
}

/**
 * The schedule's backstop (docs/distributor.md "Discovery"): at most one listing of the vhost per
 * interval over every execution (the `listedAt` stamp of the work board, taken conditionally). It
 * records staging queues the registry lacks (made by something other than the router), marks every
 * target with listed staged messages or a queue recorded now as wanting a pass (a request that was
 * lost, or never made), and hands the
 * listing, grouped by target, to the reaper. False when another execution listed within the interval.
 */
export async function runBackstop(deps: BackstopDeps): Promise<boolean> {
  const now = deps.now ?? Date.now;
  if (!(await deps.board.takeListing(now(), deps.intervalMs))) return false;
  const listing = await deps.listQueues();
  const byTarget = stagingQueuesByTarget(listing);
  let recorded = 0;
  // A queue recorded now was never asked for; the listing's counts lag, so its target is due whatever they say.
  const newlyRecorded = new Set<string>();
  if (deps.registry) {
    const registry = deps.registry;
    for (const [target, queues] of byTarget) {
      const known = new Set((await registry.queuesOf(target)).map((r) => r.queue));
      for (const queue of queues) {
        if (known.has(queue.name)) continue;
        // A queue being reaped answers `reaping`: the reaper's, left alone.
        if ((await registry.touch(target, queue.name, now())) !== 'recorded') continue;
        recorded++;
        newlyRecorded.add(target);
      }
    }
  }
  const wanted = [...byTarget]
    .filter(([target, queues]) => newlyRecorded.has(target) || queues.some((q) => q.messages_ready > 0))
    .map(([target]) => target);
  if (wanted.length > 0) await deps.board.request(wanted);
  await deps.reapIdleStagingQueues?.(byTarget, now());
  deps.report.backstopListed({ queues: listing.length, recorded, wanted: wanted.length });
  return true;
}
