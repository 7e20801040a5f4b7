import { paginateScan } from '@aws-sdk/lib-dynamodb';
import type { Pool } from 'pg';
import type { CleanupJobName } from '../../lib/cleanup/jobs';
import { JOB_TUNING } from '../../lib/cleanup/jobs/config';
import { REPOSITORY_JOB } from '../../lib/cleanup/jobs/repository';
import { STATUS90_JOB } from '../../lib/cleanup/jobs/status90';
import { TIMEBASED_JOB } from '../../lib/cleanup/jobs/timebased';
import type { Env } from '../../lib/platform/config';
import { dynamoItemBytes } from '../../test/harness/dynamo-item-size';
import type { DeployedCleanup } from './cleanup-deployed';
import { jobEnv, NOW, type Registry, retentionOf, stepper } from './cleanup-registry';
import { type BenchDynamo, dynamoReads, dynamoWrites, startBenchDynamo } from './hops';

/** What a replay measured. */
export interface Replay {
  job: CleanupJobName;
  /** Documents the job had to delete, counted before the replay. */
  eligible: number;
  /** Documents the job reported deleted. */
  deleted: number;
  ticks: number;
  drainMinutes: number;
  lambdaMs: number;
  reads: number;
  writes: number;
  /** The largest item the job's stack held after any tick, by DynamoDB's size rules, and its operation kind. */
  maxItem: { bytes: number; kind: string };
}

/** One job's replay: what it must delete on a registry, and how to tell that it did. */
export interface ReplaySpec {
  job: CleanupJobName;
  deployed: DeployedCleanup;
  /** Settings the bench adds to the deployed ones (the time-based job's types and retention). */
  env?: Env;
  eligible(pool: Pool): Promise<number>;
  /** What is left that the job should have deleted, one line each (empty: nothing). */
  leftOver(pool: Pool): Promise<string[]>;
}

/** A safety net: a job that has not drained after this many ticks is stuck. */
const MAX_TICKS = 10_000;

/**
 * The deployed schedule replayed on `registry`: tick k runs one invocation of the product's step
 * runner with the job's clock at NOW + k × interval (plus the real time elapsed within the
 * invocation, which its time budget counts), until the job has deleted every eligible document.
 * dynalite runs in its own process behind a `delayMs` delay proxy; it counts the requests of each
 * tick, and the stack is read after the counts (uncounted) to size its items.
 */
export async function scheduleReplay(registry: Registry, spec: ReplaySpec, delayMs: number): Promise<Replay> {
  const { pool } = registry;
  const eligible = await spec.eligible(pool);
  const dynamo = await startBenchDynamo(delayMs);
  try {
    let tickAt = NOW.getTime();
    let tickStarted = performance.now();
    const s = stepper(spec.job, registry, dynamo.doc, jobEnv(registry, spec.deployed.env, spec.env), () => {
      return tickAt + (performance.now() - tickStarted);
    });
    const replay: Replay = {
      job: spec.job,
      eligible,
      deleted: 0,
      ticks: 0,
      drainMinutes: 0,
      lambdaMs: 0,
      reads: 0,
      writes: 0,
      maxItem: { bytes: 0, kind: '–' },
    };
    let deletedAtFill = -1;
    while (s.deleted() < eligible) {
      if (replay.ticks >= MAX_TICKS) throw stuck(spec.job, s.deleted(), eligible, `${MAX_TICKS} ticks`);
      tickAt = NOW.getTime() + replay.ticks * spec.deployed.intervalMs;
      await dynamo.reset();
      tickStarted = performance.now();
      const steps = await s.runSteps();
      const ms = performance.now() - tickStarted;
      const counts = await dynamo.counts();
      replay.reads += counts.count(...dynamoReads);
      replay.writes += counts.count(...dynamoWrites);
      replay.lambdaMs += ms;
      replay.drainMinutes = (replay.ticks * spec.deployed.intervalMs + ms) / 60_000;
      replay.ticks++;
      if (steps.some((step) => step.fill)) {
        // A new pass over the registry: the last one must have deleted something, or the job is stuck.
        if (s.deleted() === deletedAtFill) throw stuck(spec.job, s.deleted(), eligible, 'a whole pass');
        deletedAtFill = s.deleted();
      }
      replay.maxItem = await largestItem(dynamo, replay.maxItem);
    }
    replay.deleted = s.deleted();
    const left = await spec.leftOver(pool);
    if (left.length > 0) throw new Error(`${spec.job} replay left ${left.join(', ')}`);
    return replay;
  } finally {
    await dynamo.stop();
  }
}

const stuck = (job: string, deleted: number, eligible: number, after: string) =>
  new Error(`${job} replay: ${deleted} of ${eligible} eligible documents deleted after ${after}`);

/** The largest item in the table now, or `than` if none is larger (every page of a Scan). */
async function largestItem(dynamo: BenchDynamo, than: Replay['maxItem']): Promise<Replay['maxItem']> {
  let largest = than;
  for await (const page of paginateScan({ client: dynamo.doc }, { TableName: 'CleanupStackTable' })) {
    for (const item of page.Items ?? []) {
      const bytes = dynamoItemBytes(item);
      if (bytes > largest.bytes) largest = { bytes, kind: typeof item.kind === 'string' ? item.kind : String(item.sk) };
    }
  }
  return largest;
}

const count = async (pool: Pool, sql: string, params: unknown[] = []) =>
  Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${sql}`, params)).rows[0]!.n);
const leftLines = (counts: Record<string, number>) =>
  Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([what, n]) => `${n} ${what}`);

/** registry-timebased-cleanup: every type kept `retentionDays`; eligible = created before NOW less that. */
export function timebasedReplay(deployed: DeployedCleanup, retentionDays: number): ReplaySpec {
  const cutoff = new Date(NOW.getTime() - retentionDays * 86_400_000);
  const expired = (pool: Pool) => count(pool, 'documents WHERE created_at < $1', [cutoff]);
  return {
    job: TIMEBASED_JOB,
    deployed,
    env: retentionOf(retentionDays),
    eligible: expired,
    leftOver: async (pool) => leftLines({ 'expired documents': await expired(pool) }),
  };
}

/** registry-status90-cleanup: eligible = the documents of citizens with status 90 (the deployed default). */
export function status90Replay(deployed: DeployedCleanup): ReplaySpec {
  const status = JOB_TUNING.deceasedStatus;
  const ofDeceased = (pool: Pool) =>
    count(pool, 'documents d JOIN citizens c ON c.cpr = d.citizen_id WHERE c.status = $1', [status]);
  return {
    job: STATUS90_JOB,
    deployed,
    eligible: ofDeceased,
    leftOver: async (pool) => leftLines({ 'documents of deceased citizens': await ofDeceased(pool) }),
  };
}

/**
 * repository-cleanup: eligible = the deletion records still pending in OpenXDS. Afterwards none may
 * be pending, and OpenXDS may hold none of the ids NXRG records as deleted.
 */
export function repositoryReplay(deployed: DeployedCleanup): ReplaySpec {
  const pending = (pool: Pool) => count(pool, 'deleted_documents WHERE openxds_deleted_at IS NULL');
  return {
    job: REPOSITORY_JOB,
    deployed,
    eligible: pending,
    leftOver: async (pool) =>
      leftLines({
        'deletion records pending': await pending(pool),
        'deleted ids still in OpenXDS': await count(
          pool,
          'deleted_documents x JOIN repository_documents r ON r.document_id = x.document_id',
        ),
      }),
  };
}
