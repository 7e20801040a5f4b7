import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { Pool } from 'pg';
import { parse } from 'yaml';
import { seededRandom } from '../lib/cleanup/engine/random';
import type { DocumentPort } from '../lib/cleanup/engine/stack-store';
import { cleanupJob } from '../lib/cleanup/jobs';
import { chunk } from '../lib/cleanup/jobs/deletions';
import { TIMEBASED_JOB } from '../lib/cleanup/jobs/timebased';
import { createStepRunner } from '../lib/cleanup/step-runner';
import { type CleanupConfig, loadCleanupConfig } from '../lib/config/cleanup';
import type { Env } from '../lib/config/env';
import { startDynamo } from '../local/embedded-dynamo';
import { projectRoot } from '../local/paths';
import { DEFAULT_DOCUMENT_TYPES, generateRegistry } from '../test/harness/registry/generate';
import type { Benchmark } from './lib/benchmark';
import { dynamoItemBytes } from './lib/dynamo-item-size';
import { countingDynamoProxy, dynamoWrites } from './lib/dynamo-proxy';
import type { Row } from './lib/report';
import { createBenchSchema } from './lib/services';

type Flags = 'documents' | 'rounds' | 'replay';

/** The moment the registry is generated against and the replay starts at. */
const NOW = new Date('2026-06-01T00:00:00Z');
/** Throughput runs: about half of the generated documents (spread over 20 years) are past a 10-year retention. */
const HALF_RETENTION_DAYS = 3_650;
/** Replay: a one-year retention makes about 95 % of the documents eligible. */
const REPLAY_RETENTION_DAYS = 365;
/** Measured share of eligible documents with that retention (a little under 19/20), kept low so the replay reaches its size. */
const REPLAY_ELIGIBLE_SHARE = 0.93;
const DRAIN_GOAL_MINUTES = 15;
const ITEM_GOAL_BYTES = 1_024;
const RATIO_GOAL = 0.8;
/** Batch sizes tried for the step's documents/s (the default is among them). */
const BATCH_SIZES = [1_000, 5_000, 10_000, 25_000];
const TABLE = 'CleanupStackTable';
const DYNAMO_READS = ['GetItem', 'Query', 'Scan', 'BatchGetItem'];

/** The deployed defaults of the timebased job (serverless.yml `params.default`), so the replay runs what ships. */
function deployedDefaults() {
  const yml = parse(readFileSync(join(projectRoot(), 'serverless.yml'), 'utf8')) as {
    params: { default: Record<string, string | number> };
  };
  const p = yml.params.default;
  const rate = /^rate\((\d+) minutes?\)$/.exec(String(p.registryTimebasedCleanupRate));
  if (!rate)
    throw new Error(
      `serverless.yml registryTimebasedCleanupRate is not rate(N minutes): ${p.registryTimebasedCleanupRate}`,
    );
  return {
    intervalMs: Number(rate[1]) * 60_000,
    env: {
      CLEANUP_TIME_BUDGET_SECONDS: String(p.cleanupTimeBudgetSeconds),
      CLEANUP_STEPS_PER_INVOCATION: String(p.cleanupStepsPerInvocation),
      CLEANUP_MAX_DELETES_PER_STEP: String(p.cleanupMaxDeletesPerStep),
      CLEANUP_TIMEBASED_BATCH_SIZE: String(p.registryTimebasedCleanupBatchSize),
    } satisfies Env,
  };
}

/**
 * SPEC §4 cleanup, issue 15: registry-timebased-cleanup deleting keyset ranges, driven through the
 * product's own step runner (one step per invocation, the deployed time budget) on a generated NXRG
 * registry (real PostgreSQL) with its stack in dynalite. Three measurements: a step's documents/s
 * against the raw DELETE-and-record statement in the job's own order at the same batch size (medians
 * of rounds in alternating order); a schedule replay (ticks of the deployed schedule simulated, real
 * work timed) draining registries of growing size; and what that costs in DynamoDB and Lambda time.
 */
export const cleanupBench: Benchmark<Flags> = {
  name: 'cleanup',
  summary:
    'timebased cleanup: step docs/s vs raw DELETE-and-record, schedule-replay drain time by registry size, DynamoDB item size and cost per million deleted',
  flags: {
    documents: {
      quick: 200_000,
      tiny: 2_000,
      help: 'documents per registry of the throughput runs (about half eligible)',
    },
    rounds: {
      quick: 5,
      tiny: 1,
      help: 'paired rounds of job vs raw at the default batch size (median ratio reported)',
    },
    replay: {
      quick: 1_000_000,
      tiny: 2_000,
      help: 'eligible documents of the largest schedule replay (the curve also replays a tenth and a third of it)',
    },
  },
  async run(flags, progress) {
    const defaults = deployedDefaults();
    const defaultBatch = Number(defaults.env.CLEANUP_TIMEBASED_BATCH_SIZE);

    // 1. A step against the raw statement: paired runs in alternating order, per batch size; the
    // default batch size gets `rounds` pairs and the goal takes the median of their ratios.
    const throughput: Row[] = [];
    let defaultRatio = 0;
    for (const batch of BATCH_SIZES) {
      const rounds = batch === defaultBatch ? flags.rounds : 1;
      const ratios: number[] = [];
      const jobs: number[] = [];
      const raws: number[] = [];
      for (let round = 0; round < rounds; round++) {
        let job = 0;
        let raw = 0;
        const runs = [
          async () => (job = (await withRegistry(flags.documents, (db) => jobRun(db, defaults.env, batch))).rate),
          async () => (raw = (await withRegistry(flags.documents, (db) => rawRun(db, batch))).rate),
        ];
        if (round % 2 === 1) runs.reverse();
        for (const run of runs) await run();
        ratios.push(job / raw);
        jobs.push(job);
        raws.push(raw);
        throughput.push({
          'batch size': batch === defaultBatch ? `${batch} (default)` : batch,
          round: round + 1,
          'step docs/s': job,
          'raw DELETE-and-record docs/s': raw,
          'step ÷ raw': job / raw,
        });
        progress(`batch ${batch} round ${round + 1}: step ${job.toFixed(0)} docs/s, raw ${raw.toFixed(0)} docs/s`);
      }
      if (batch === defaultBatch) {
        defaultRatio = median(ratios);
        throughput.push({
          'batch size': `${batch} (default)`,
          round: 'median',
          'step docs/s': median(jobs),
          'raw DELETE-and-record docs/s': median(raws),
          'step ÷ raw': defaultRatio,
        });
      }
    }

    // 2. Schedule replays of growing size; the largest carries the drain goal and the cost figures.
    const sizes = [Math.round(flags.replay / 10), Math.round(flags.replay / 3), flags.replay];
    const curve: Row[] = [];
    let largest: Replay | undefined;
    for (const eligibleWanted of sizes) {
      const documents = Math.ceil(eligibleWanted / REPLAY_ELIGIBLE_SHARE);
      const replay = await withRegistry(documents, (db) => scheduleReplay(db, defaults));
      largest = replay;
      curve.push({
        'registry documents': documents,
        eligible: replay.eligible,
        invocations: replay.ticks,
        'drain time (simulated min)': replay.drainMinutes,
        'Lambda s': replay.lambdaMs / 1e3,
        'max item bytes': replay.maxItemBytes,
      });
      progress(`replay of ${replay.eligible} eligible: drained in ${replay.drainMinutes.toFixed(1)} simulated minutes`);
    }
    const big = largest!;
    const perMillion = 1e6 / big.eligible;
    const goals: Row[] = [
      {
        goal: `schedule replay drains ${big.eligible} eligible documents within ${DRAIN_GOAL_MINUTES} simulated minutes`,
        measured: `${big.drainMinutes.toFixed(1)} min`,
        verdict: verdict(big.eligible >= 1_000_000 && big.drainMinutes <= DRAIN_GOAL_MINUTES),
      },
      {
        goal: `DynamoDB item size per operation < ${ITEM_GOAL_BYTES} bytes`,
        measured: `${big.maxItemBytes} bytes (largest item seen)`,
        verdict: verdict(big.maxItemBytes < ITEM_GOAL_BYTES),
      },
      {
        goal: `step docs/s ≥ ${RATIO_GOAL} × raw DELETE-and-record, job's order, batch ${defaultBatch}`,
        measured: defaultRatio.toFixed(2),
        verdict: verdict(defaultRatio >= RATIO_GOAL),
      },
    ];
    const cost: Row[] = [
      {
        'per million documents deleted': 'registry-timebased-cleanup',
        'DynamoDB reads': big.reads * perMillion,
        'DynamoDB writes': big.writes * perMillion,
        'Lambda ms': big.lambdaMs * perMillion,
        'invocations (schedule)': Math.ceil(big.ticks * perMillion),
      },
    ];
    const schedule = `rate(${defaults.intervalMs / 60_000} minute(s)), budget ${defaults.env.CLEANUP_TIME_BUDGET_SECONDS} s, batch ${defaultBatch}`;
    return [
      { title: 'Cleanup goals (issue 15)', rows: goals, notes: [`Deployed defaults (serverless.yml): ${schedule}.`] },
      {
        title: `Cleanup: a step's documents/s against the raw DELETE-and-record statement, ${flags.documents}-document registries`,
        rows: throughput,
        notes: [
          'Step: the product step runner (one step per invocation, the deployed time budget) on the timebased job, ' +
            'stack in dynalite, until the stack is empty; docs/s over the invocations\u2019 wall time, fill steps and ' +
            'DynamoDB included. Raw: the same eligible ids read beforehand (not timed) in the job\u2019s own order (type ' +
            'by type, (time, id) within), deleted in batches of the same size by `WITH gone AS (DELETE … WHERE id = ' +
            'ANY($1) RETURNING id) INSERT INTO deleted_documents …`. Each run gets a freshly generated registry (same ' +
            'seed); pairs in alternating order; other batch sizes one pair each (indicative only: a single pair ' +
            'moves by 2× on this shared machine).',
        ],
      },
      {
        title: 'Cleanup: schedule replay, drain time against registry size',
        rows: curve,
        notes: [
          `Ticks of the deployed schedule (${schedule}) are simulated: each tick runs one invocation of the product ` +
            'step runner for real and the job\u2019s clock jumps to the next tick between them. Drain time = ' +
            'the tick of the last deleting invocation plus its own duration. Retention 365 days on every type ' +
            '(≈94 % eligible). Largest item: every stack item after every tick, sized by DynamoDB\u2019s rules.',
        ],
      },
      {
        title: 'Cleanup: cost per million documents deleted (largest replay)',
        rows: cost,
        notes: [
          'DynamoDB requests counted on the wire by a proxy; Lambda ms = the invocations\u2019 wall time summed.',
        ],
      },
    ];
  },
};

const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL');
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** Runs `work` on a freshly generated registry in a schema of its own, dropped afterwards. */
async function withRegistry<T>(documents: number, work: (db: Registry) => Promise<T>): Promise<T> {
  const schema = await createBenchSchema('cleanup');
  try {
    await generateRegistry(schema.pool, schema.pool, {
      seed: 'bench',
      documents,
      citizens: Math.max(10, Math.floor(documents / 10)),
      earlierDeletions: 0,
      now: NOW,
    });
    await schema.pool.query('VACUUM ANALYZE documents');
    return await work({ pool: schema.pool, url: schema.url });
  } finally {
    await schema.drop();
  }
}

/** A generated registry: its pool, and its URL for the job's configuration. */
interface Registry {
  pool: Pool;
  url: string;
}

function timebasedEnv(url: string, retentionDays: number, overrides: Env): Env {
  return {
    CLEANUP_TABLE: TABLE,
    NXRG_DATABASE_URL: url,
    OPENXDS_DATABASE_URL: url,
    NXRG_DOCUMENT_TYPES: DEFAULT_DOCUMENT_TYPES.join(','),
    CLEANUP_TIMEBASED_DOCUMENT_TYPES: JSON.stringify(
      Object.fromEntries(DEFAULT_DOCUMENT_TYPES.map((t) => [t, { retentionDays }])),
    ),
    ...overrides,
  };
}

/** The eligible ids in the job's own order: type by type as configured, (created_at, id) within. */
async function eligibleInJobOrder(pool: Pool, retentionDays: number, at: Date): Promise<string[]> {
  const cutoff = new Date(at.getTime() - retentionDays * 86_400_000);
  const ids: string[] = [];
  for (const type of DEFAULT_DOCUMENT_TYPES) {
    const { rows } = await pool.query<{ id: string }>(
      'SELECT id FROM documents WHERE document_type = $1 AND created_at < $2 ORDER BY created_at, id',
      [type, cutoff],
    );
    for (const row of rows) ids.push(row.id);
  }
  return ids;
}

interface Stepper {
  runSteps: () => Promise<unknown>;
  deleted: () => number;
}

/** The product's step runner on the timebased job, reporting deletions into a counter. */
function stepper(pool: Pool, doc: DocumentPort, config: CleanupConfig, env: Env, clock: () => number): Stepper {
  let deleted = 0;
  const job = cleanupJob(
    TIMEBASED_JOB,
    env,
    { nxrg: pool, openxds: pool },
    { deleted: (e) => (deleted += e.documentIds.length), dropped: () => undefined },
  );
  const runSteps = createStepRunner(job, config, {
    doc,
    clock,
    random: seededRandom(1),
    report: { stepped: () => undefined, stepFailed: () => undefined },
  });
  return { runSteps, deleted: () => deleted };
}

/** Invocations of the step runner, back to back, until the job has deleted every eligible document. */
async function jobRun({ pool, url }: Registry, defaults: Env, batch: number) {
  const eligible = (await eligibleInJobOrder(pool, HALF_RETENTION_DAYS, NOW)).length;
  const env = timebasedEnv(url, HALF_RETENTION_DAYS, { ...defaults, CLEANUP_TIMEBASED_BATCH_SIZE: String(batch) });
  const dynamo = await startDynamo();
  try {
    await dynamo.createTables();
    const start = performance.now();
    // The job's clock stands at NOW (retention cut-offs fixed) and runs in real time within a step, for the budget.
    const s = stepper(pool, dynamo.doc, loadCleanupConfig(env), env, () => NOW.getTime() + (performance.now() - start));
    for (let invocations = 0; s.deleted() < eligible; invocations++) {
      if (invocations > 10_000) throw new Error(`${s.deleted()} of ${eligible} deleted after 10,000 invocations`);
      await s.runSteps();
    }
    return { rate: eligible / ((performance.now() - start) / 1e3) };
  } finally {
    await dynamo.stop();
  }
}

/** The raw statement: the same ids in the same order, batches of the same size, one connection. */
async function rawRun({ pool }: Registry, batch: number) {
  const batches = chunk(await eligibleInJobOrder(pool, HALF_RETENTION_DAYS, NOW), batch);
  let deleted = 0;
  const start = performance.now();
  for (const ids of batches) {
    const result = await pool.query(
      `WITH gone AS (DELETE FROM documents WHERE id = ANY($1::uuid[]) RETURNING id)
       INSERT INTO deleted_documents (document_id, deleted_at, reason) SELECT id, now(), 'bench' FROM gone`,
      [ids],
    );
    deleted += result.rowCount ?? 0;
  }
  return { rate: deleted / ((performance.now() - start) / 1e3) };
}

interface Replay {
  eligible: number;
  ticks: number;
  drainMinutes: number;
  lambdaMs: number;
  reads: number;
  writes: number;
  maxItemBytes: number;
}

/**
 * The deployed schedule replayed: tick k runs one invocation with the job's clock at NOW + k ×
 * interval (plus the real time elapsed within the invocation, which its time budget counts).
 */
async function scheduleReplay({ pool, url }: Registry, defaults: ReturnType<typeof deployedDefaults>): Promise<Replay> {
  const eligible = (await eligibleInJobOrder(pool, REPLAY_RETENTION_DAYS, NOW)).length;
  const env = timebasedEnv(url, REPLAY_RETENTION_DAYS, defaults.env);
  const dynamo = await startDynamo();
  const proxy = await countingDynamoProxy(dynamo.endpoint);
  const client = new DynamoDBClient({
    endpoint: proxy.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  try {
    await dynamo.createTables();
    proxy.reset();
    let tickAt = NOW.getTime();
    let tickStarted = performance.now();
    const s = stepper(pool, doc, loadCleanupConfig(env), env, () => tickAt + (performance.now() - tickStarted));
    let ticks = 0;
    let lambdaMs = 0;
    let maxItemBytes = 0;
    let drainMs = 0;
    while (s.deleted() < eligible) {
      if (ticks > 10_000) throw new Error(`${s.deleted()} of ${eligible} deleted after 10,000 ticks`);
      tickAt = NOW.getTime() + ticks * defaults.intervalMs;
      tickStarted = performance.now();
      await s.runSteps();
      const ms = performance.now() - tickStarted;
      lambdaMs += ms;
      drainMs = ticks * defaults.intervalMs + ms;
      ticks++;
      // Read the stack directly (not through the counting proxy): the largest item it holds now.
      const { Items = [] } = await dynamo.doc.send(new ScanCommand({ TableName: TABLE }));
      for (const item of Items) maxItemBytes = Math.max(maxItemBytes, dynamoItemBytes(item));
    }
    const left = await pool.query<{ n: string }>('SELECT count(*) AS n FROM documents WHERE created_at < $1', [
      new Date(NOW.getTime() - REPLAY_RETENTION_DAYS * 86_400_000),
    ]);
    if (Number(left.rows[0]!.n) > 0) throw new Error(`${left.rows[0]!.n} eligible documents left after the replay`);
    return {
      eligible,
      ticks,
      drainMinutes: drainMs / 60_000,
      lambdaMs,
      reads: proxy.count(...DYNAMO_READS),
      writes: proxy.count(...dynamoWrites),
      maxItemBytes,
    };
  } finally {
    client.destroy();
    await proxy.close();
    await dynamo.stop();
  }
}
