import { type DynamoDBDocumentClient, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';

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
