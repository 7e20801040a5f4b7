import { type DynamoDBDocumentClient, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import type { DistributorReport, QueueSummary } from '../report';
import { longestWaits } from '../waits';

/** A staging queue's wait as the last pass that moved from it measured it. */
export interface StagingWait {
  queue: string;
  maxMs: number;
  p50Ms: number;
  measured: number;
}

/** A target's staging waits as its last pass that measured any left them. */
export interface TargetWaits {
  target: string;
  /** Epoch ms the pass measured them. */
  at: number;
  /** The longest first, at most STORED_WAITS_PER_TARGET. */
  queues: StagingWait[];
  /** The tenants holding the most in staging then, the most first (waits.ts `noisyTenants`); absent when none was staged. */
  backlog?: { tenant: string; staged: number }[];
}

/** The last measured waits per target, for `fairway tenants`. */
export interface WaitStore {
  /** Written under the target's lease: no other pass writes it meanwhile. */
  record(waits: TargetWaits): Promise<void>;
  /** Every target's; an item that is not well formed is left out. */
  readAll(): Promise<TargetWaits[]>;
}

/** Queues kept per target: the longest waits are what an operator looks for, and the item stays ~2 KB (2 WCU a write, at most one per target every 10 s per container). */
export const STORED_WAITS_PER_TARGET = 25;

const PREFIX = 'staging-waits#';
const waitShape = z.object({
  queue: z.string(),
  maxMs: z.number().min(0),
  p50Ms: z.number().min(0),
  measured: z.number().int().min(1),
});
const itemShape = z.object({
  target: z.string(),
  at: z.number(),
  queues: z.array(waitShape),
  backlog: z.array(z.object({ tenant: z.string(), staged: z.number().int().min(0) })).optional(),
});

/**
 * WaitStore in the distributor's state table: one item per target (`staging-waits#<target>`),
 * replaced by each pass that measured a wait, so one write a target a pass; read with one scan of
 * that small table (an operator's view, not a hot path).
 */
export class DynamoWaitStore implements WaitStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async record({ target, at, queues, backlog }: TargetWaits): Promise<void> {
    const kept = queues.slice(0, STORED_WAITS_PER_TARGET);
    const item = { pk: `${PREFIX}${target}`, target, at, queues: kept, ...(backlog ? { backlog } : {}) };
    await this.doc.send(new PutCommand({ TableName: this.table, Item: item }));
  }

  async readAll(): Promise<TargetWaits[]> {
    const found: TargetWaits[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.doc.send(
        new ScanCommand({
          TableName: this.table,
          FilterExpression: 'begins_with(pk, :prefix)',
          ExpressionAttributeValues: { ':prefix': PREFIX },
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) {
        const parsed = itemShape.safeParse(item);
        if (parsed.success) found.push(parsed.data);
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return found.sort((a, b) => a.target.localeCompare(b.target));
  }
}

/** A target's waits record is written at most this often per container (it is the CLI's view, not a guarantee). */
const WAIT_RECORD_INTERVAL_MS = 10_000;

/** Records targets' longest staging waits for the CLI (none without a store). */
export function waitRecorder(
  waits: WaitStore | undefined,
  report: Pick<DistributorReport, 'waitsNotRecorded'>,
  now: () => number,
) {
  /** Per target, the waits measured since its record was last written (this container's passes). */
  const waitsSince = new Map<string, { writtenAt: number; queues: Map<string, StagingWait> }>();

  /**
   * Keeps the target's longest waits for the CLI: the first pass's at once, then at most every
   * WAIT_RECORD_INTERVAL_MS the longest of the passes since (one write per target per interval, not per
   * pass), with the noisiest tenants by backlog as the latest pass saw them. A failed write is
   * reported, never fails the target.
   */
  async function recordWaits(
    target: string,
    queues: readonly QueueSummary[],
    backlog?: TargetWaits['backlog'],
  ): Promise<void> {
    if (!waits) return;
    const since = waitsSince.get(target) ?? { writtenAt: -Infinity, queues: new Map<string, StagingWait>() };
    waitsSince.set(target, since);
    for (const { name, wait } of longestWaits(queues, STORED_WAITS_PER_TARGET)) {
      const kept = since.queues.get(name);
      if (!kept || wait.maxMs > kept.maxMs)
        since.queues.set(name, { queue: name, maxMs: wait.maxMs, p50Ms: wait.p50Ms, measured: wait.measured });
    }
    if (now() - since.writtenAt < WAIT_RECORD_INTERVAL_MS) return;
    const longest = [...since.queues.values()]
      .sort((a, b) => b.maxMs - a.maxMs || a.queue.localeCompare(b.queue))
      .slice(0, STORED_WAITS_PER_TARGET);
    since.writtenAt = now();
    since.queues.clear();
    await waits
      .record({ target, at: now(), queues: longest, ...(backlog ? { backlog } : {}) })
      .catch((error: unknown) => {
        report.waitsNotRecorded(target, error);
      });
  }

  return recordWaits;
}

/** A stint's queue figures so far with one refill's added, by queue (the latest depth and weight). */
export function mergeQueues(sofar: readonly QueueSummary[], added: readonly QueueSummary[]): QueueSummary[] {
  const merged = new Map(sofar.map((q) => [q.name, q]));
  for (const q of added) {
    const was = merged.get(q.name);
    merged.set(
      q.name,
      was
        ? {
            ...q,
            planned: was.planned + q.planned,
            moved: was.moved + q.moved,
            requeued: was.requeued + q.requeued,
            parked: was.parked + q.parked,
            ...longerWait(was, q),
          }
        : q,
    );
  }
  return [...merged.values()];
}

/** The longer of two figures' waits (none when neither has one). */
function longerWait(a: QueueSummary, b: QueueSummary): Pick<QueueSummary, 'wait'> {
  const wait = !a.wait || (b.wait && b.wait.maxMs > a.wait.maxMs) ? b.wait : a.wait;
  return wait ? { wait } : {};
}
