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

/** One of a target's noisiest tenants, by what it held in staging when the target's waits were recorded. */
export interface NoisyRow {
  target: string;
  tenant: string;
  staged: number;
  /** When (ISO 8601). */
  seenAt: string;
}

/** Each target's noisiest tenants as recorded, the most staged first over every target. Pure. */
export function noisyRows(targets: readonly TargetWaits[]): NoisyRow[] {
  return targets
    .flatMap(({ target, at, backlog }) =>
      (backlog ?? []).map((b) => ({ target, tenant: b.tenant, staged: b.staged, seenAt: new Date(at).toISOString() })),
    )
    .sort((a, b) => b.staged - a.staged || a.target.localeCompare(b.target) || a.tenant.localeCompare(b.tenant));
}

/**
 * The staging waits and noisiest tenants the distributor recorded (DISTRIBUTOR_TABLE, one item per
 * target written by each pass that moved stamped messages, at most every 10 s): read, never measured here.
 */
export async function readStagingWaits(
  doc: DynamoDBDocumentClient,
  table: string,
): Promise<{ waits: WaitRow[]; noisy: NoisyRow[] }> {
  const targets = await new DynamoWaitStore(doc, table).readAll();
  return { waits: waitRows(targets), noisy: noisyRows(targets) };
}
