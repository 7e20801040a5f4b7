import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoWaitStore, type TargetWaits } from '../../lib/distributor/stores/wait-store';
import { parseStagingQueueName } from '../../lib/staging/staging-names';

/** One staging queue's wait as `fairway tenants` shows it. */
export interface WaitRow {
  tenant?: string;
  workflow?: string;
  target: string;
  /** The longest wait of the messages the target's last pass moved from the queue. */
  waitSeconds: number;
  p50Seconds: number;
  measured: number;
  /** When that pass measured it (ISO 8601). */
  measuredAt: string;
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;

/** Every stored wait as rows, the longest first. Pure. */
export function waitRows(targets: readonly TargetWaits[]): WaitRow[] {
  return targets
    .flatMap(({ target, at, queues }) =>
      queues.map((q): WaitRow => {
        const { tenant, workflow } = parseStagingQueueName(q.queue) ?? {};
        return {
          ...(tenant === undefined ? {} : { tenant }),
          ...(workflow === undefined ? {} : { workflow }),
          target,
          waitSeconds: seconds(q.maxMs),
          p50Seconds: seconds(q.p50Ms),
          measured: q.measured,
          measuredAt: new Date(at).toISOString(),
        };
      }),
    )
    .sort((a, b) => b.waitSeconds - a.waitSeconds || a.target.localeCompare(b.target));
}

/**
 * The staging waits the distributor measured (DISTRIBUTOR_TABLE, one item per target written by
 * each pass that moved stamped messages): read, never measured here.
 */
export async function listStagingWaits(doc: DynamoDBDocumentClient, table: string): Promise<WaitRow[]> {
  return waitRows(await new DynamoWaitStore(doc, table).readAll());
}
