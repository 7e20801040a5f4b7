import { engineTuning } from '../lib/cleanup/config';
import { JOB_TUNING } from '../lib/cleanup/jobs/config';
import type { Benchmark } from './lib/benchmark';
import { type DeployedCleanup, deployedCleanup, describeOwn } from './lib/cleanup-deployed';
import { type Registry, withRegistry } from './lib/cleanup-registry';
import {
  type Replay,
  type ReplaySpec,
  repositoryReplay,
  scheduleReplay,
  status90Replay,
  timebasedReplay,
} from './lib/cleanup-replay';
import { rawRun, rawStatements, stepRun } from './lib/cleanup-throughput';
import { type Goal, goalsTable, inRotation, median, type Row, type Table } from './lib/report';

type Flags = 'documents' | 'rounds' | 'replay' | 'status90' | 'repository' | 'delay';

/** Time-based replay: a one-year retention makes about 95 % of the documents eligible. */
const REPLAY_RETENTION_DAYS = 365;
/** Measured share of eligible documents with that retention (a little under 19/20), kept low so the replay reaches its size. */
const REPLAY_ELIGIBLE_SHARE = 0.93;
/** Documents of deceased citizens: 15 % of citizens, 2 % of documents have no citizen row (measured ≈ 14.7 %). */
const STATUS90_ELIGIBLE_SHARE = 0.14;
const DRAIN_GOAL_MINUTES = 15;
const ITEM_GOAL_BYTES = 1_024;
const RATIO_GOAL = 0.8;
/** Batch sizes tried for the step's documents/s (the default is among them). */
const BATCH_SIZES = [1_000, 5_000, 10_000, 25_000];

/**
 * SPEC §4 cleanup, issue 15: the three cleanup jobs driven through the product's own step runner
 * (the deployed settings of serverless.yml) on generated registries (real PostgreSQL), the stack in
 * dynalite in its own process behind a delay proxy. A time-based step's documents/s against the
 * raw DELETE-and-record statement at the same batch size, and what the deletion record costs over
 * a bare DELETE (medians of rounds, order rotated); schedule replays (ticks simulated, real work
 * timed) of every job, the time-based one at growing sizes; from them the largest stack item and
 * the DynamoDB requests and Lambda time per million documents deleted.
 */
export const cleanupBench: Benchmark<Flags> = {
  name: 'cleanup',
  summary:
    'cleanup jobs: time-based step docs/s vs raw DELETE-and-record, record cost, schedule replays of the three jobs (drain time, DynamoDB item size, cost per million deleted)',
  flags: {
    documents: {
      quick: 200_000,
      tiny: 2_000,
      help: 'documents per registry of the throughput runs (about half eligible)',
    },
    rounds: {
      quick: 5,
      tiny: 1,
      help: 'rounds of step, raw DELETE-and-record and bare DELETE at the default batch size, order rotated (medians reported)',
    },
    replay: {
      quick: 1_000_000,
      tiny: 2_000,
      help: 'eligible documents of the largest time-based schedule replay (the curve also replays a tenth and a third of it)',
    },
    status90: {
      quick: 50_000,
      tiny: 300,
      help: 'documents of deceased citizens in the registry-status90-cleanup replay',
    },
    repository: {
      quick: 50_000,
      tiny: 300,
      help: 'deletion records pending in OpenXDS in the repository-cleanup replay',
    },
    delay: { quick: 1, tiny: 1, help: 'ms added to every round trip to DynamoDB (a delay proxy)' },
  },
  async run(flags, progress) {
    const deployed = {
      timebased: deployedCleanup('registryTimebasedCleanup'),
      status90: deployedCleanup('registryStatus90Cleanup'),
      repository: deployedCleanup('repositoryCleanup'),
    };
    const throughput = await throughputTables(flags, deployed.timebased, progress);
    const replays = await replayTables(flags, deployed, progress);
    return [goalsTable('cleanup', [...replays.goals, throughput.goal]), ...throughput.tables, ...replays.tables];
  },
};

type Section = { tables: Table[] };
const larger = <R extends Replay>(a: R, b: R) => (b.maxItem.bytes > a.maxItem.bytes ? b : a);

/**
 * Schedule replays: the time-based job at growing sizes (the largest carries the drain goal and
 * its cost row), then the status90 and repository jobs; the item-size goal over all of them.
 */
async function replayTables(
  flags: Record<Flags, number>,
  deployed: Record<'timebased' | 'status90' | 'repository', DeployedCleanup>,
  progress: (line: string) => void,
): Promise<Section & { goals: Goal[] }> {
  const replay = async (label: string, sizes: Parameters<typeof withRegistry>[0], spec: ReplaySpec) => {
    const result = await withRegistry(sizes, (db) => scheduleReplay(db, spec, flags.delay));
    progress(
      `${label}: ${result.deleted} of ${result.eligible} deleted in ${result.drainMinutes.toFixed(1)} simulated minutes`,
    );
    return { documents: sizes.documents, ...result };
  };
  const curve = [];
  for (const eligible of [Math.round(flags.replay / 10), Math.round(flags.replay / 3), flags.replay]) {
    const documents = Math.ceil(eligible / REPLAY_ELIGIBLE_SHARE);
    curve.push(await replay('time-based', { documents }, timebasedReplay(deployed.timebased, REPLAY_RETENTION_DAYS)));
  }
  const status90Documents = Math.ceil(flags.status90 / STATUS90_ELIGIBLE_SHARE);
  const others = [
    await replay('status90', { documents: status90Documents }, status90Replay(deployed.status90)),
    // Half of the earlier deletions are still pending in OpenXDS.
    await replay(
      'repository',
      { documents: flags.repository, earlierDeletions: 2 * flags.repository },
      repositoryReplay(deployed.repository),
    ),
  ];
  const big = curve.at(-1)!;
  const all = [...curve, ...others];
  const largestByJob = [big, ...others].map((r) => all.filter((o) => o.job === r.job).reduce(larger));
  const largest = largestByJob.reduce(larger);

  const schedule = (d: DeployedCleanup) => [d.rate, describeOwn(d)].filter((part) => part !== '').join(', ');
  const { env } = deployed.timebased;
  const fixed = engineTuning(Number(env.CLEANUP_FUNCTION_TIMEOUT_SECONDS));
  const engine = `time budget ${fixed.timeBudgetMs / 1000} s, ${fixed.stepsPerInvocation} step(s) per invocation`;
  const perMillion = (r: Replay): Row => {
    const m = 1e6 / r.deleted;
    return {
      'per million documents deleted': r.job,
      'documents deleted': r.deleted,
      'DynamoDB reads': r.reads * m,
      'DynamoDB writes': r.writes * m,
      'Lambda ms': r.lambdaMs * m,
      'invocations (schedule)': Math.ceil(r.ticks * m),
    };
  };
  return {
    goals: [
      {
        goal: `schedule replay drains ${big.eligible} eligible documents (time-based, deployed defaults)`,
        target: `≥ 1,000,000 within ${DRAIN_GOAL_MINUTES} simulated min`,
        measured: `${big.drainMinutes.toFixed(1)} min, ${big.ticks} invocations`,
        met: big.eligible >= 1_000_000 && big.drainMinutes <= DRAIN_GOAL_MINUTES,
      },
      {
        goal: 'DynamoDB item size per operation, every job (largest stack item of any replay)',
        target: `< ${ITEM_GOAL_BYTES} bytes`,
        measured: `${largest.maxItem.bytes} bytes: ${largestByJob.map((r) => `${r.job} ${r.maxItem.bytes} (${r.maxItem.kind})`).join(', ')}`,
        met: largest.maxItem.bytes < ITEM_GOAL_BYTES,
      },
    ],
    tables: [
      {
        title: 'Cleanup: schedule replays of every job (the time-based one at growing registry sizes)',
        rows: all.map((r) => ({
          job: r.job,
          'registry documents': r.documents,
          eligible: r.eligible,
          deleted: r.deleted,
          invocations: r.ticks,
          'drain time (simulated min)': r.drainMinutes,
          'Lambda s': r.lambdaMs / 1e3,
          'max item bytes': r.maxItem.bytes,
          'largest item': r.maxItem.kind,
        })),
        notes: [
          `Deployed defaults (serverless.yml), ${engine}: time-based ${schedule(deployed.timebased)}; ` +
            `status90 ${schedule(deployed.status90)}; repository ${schedule(deployed.repository)}.`,
          'Ticks of each job\u2019s schedule are simulated: each tick runs one invocation of the product step runner ' +
            'for real and the job\u2019s clock jumps to the next tick between them, until the job has deleted every ' +
            'eligible document (then checked in the database: none left; for the repository job, no pending record ' +
            'and no deleted id left in OpenXDS). Drain time = the tick of the last invocation plus its own duration. ' +
            `Time-based: retention ${REPLAY_RETENTION_DAYS} days on every type (≈94 % eligible). Status90: documents of ` +
            'citizens with status 90 (≈15 % of citizens). Repository: earlier deletion records, half still pending in ' +
            `OpenXDS. dynalite in its own process, +${flags.delay} ms a round trip. Largest item: every item of the ` +
            'table after every tick (read after the tick\u2019s requests were counted), sized by DynamoDB\u2019s rules; ' +
            'its operation kind.',
        ],
      },
      {
        title: 'Cleanup: cost per million documents deleted (largest time-based replay, and the other two jobs)',
        rows: [big, ...others].map(perMillion),
        notes: [
          'DynamoDB requests counted by dynalite itself, per tick, the sizing read excluded; Lambda ms = the ' +
            'invocations\u2019 wall time summed; invocations = ticks of the deployed schedule.',
        ],
      },
    ],
  };
}

/**
 * A time-based step against the raw statement, per batch size. The default batch size gets
 * `rounds` rounds of step, raw DELETE-and-record and bare DELETE, order rotated (the goal takes the
 * median ratio; the record's cost is the median time ratio of the two raw statements); the other
 * sizes one round of step and raw.
 */
async function throughputTables(
  flags: Record<Flags, number>,
  deployed: DeployedCleanup,
  progress: (line: string) => void,
): Promise<Section & { goal: Goal }> {
  const defaultBatch = JOB_TUNING.timebasedBatchSize;
  const fresh = (work: (db: Registry) => Promise<number>) => () => withRegistry({ documents: flags.documents }, work);
  const rows: Row[] = [];
  let ratios: number[] = [];
  let recordCosts: Row[] = [];
  for (const batch of [...new Set([...BATCH_SIZES, defaultBatch])].sort((a, b) => a - b)) {
    const isDefault = batch === defaultBatch;
    const runs: Record<string, () => Promise<number>> = {
      step: fresh((db) => stepRun(db, deployed.env, batch, flags.delay)),
      raw: fresh((db) => rawRun(db, batch, rawStatements.record)),
    };
    if (isDefault) runs.bare = fresh((db) => rawRun(db, batch, rawStatements.bare));
    const rates = await inRotation(runs, isDefault ? flags.rounds : 1, (line) => progress(`batch ${batch} ${line}`));
    const [step, raw, bare] = [rates.step!, rates.raw!, rates.bare];
    const label = isDefault ? `${batch} (default)` : batch;
    const roundRatios = step.map((rate, i) => rate / raw[i]!);
    step.forEach((rate, i) => {
      rows.push({
        'batch size': label,
        round: i + 1,
        'step docs/s': rate,
        'raw DELETE-and-record docs/s': raw[i]!,
        'step ÷ raw': roundRatios[i]!,
      });
    });
    if (!bare) continue;
    ratios = roundRatios;
    rows.push({
      'batch size': label,
      round: 'median',
      'step docs/s': median(step),
      'raw DELETE-and-record docs/s': median(raw),
      'step ÷ raw': median(ratios),
    });
    // Time per document: DELETE-and-record ÷ bare DELETE = bare docs/s ÷ DELETE-and-record docs/s.
    const costs = bare.map((rate, i) => rate / raw[i]!);
    const costRow = (round: string, bareRate: number, recordRate: number, cost: number): Row => ({
      round,
      'bare DELETE docs/s': bareRate,
      'DELETE-and-record docs/s': recordRate,
      'record cost (DELETE-and-record ÷ bare DELETE)': cost,
    });
    recordCosts = [
      ...bare.map((rate, i) => costRow(String(i + 1), rate, raw[i]!, costs[i]!)),
      costRow('median', median(bare), median(raw), median(costs)),
    ];
  }
  const ratio = median(ratios);
  const sameIds =
    'the same eligible ids read beforehand (not timed) in the job\u2019s own order (type by type, (time, id) within)';
  return {
    goal: {
      goal: `a time-based step's docs/s ÷ raw DELETE-and-record, job's order, batch ${defaultBatch} (median of ${ratios.length})`,
      target: `≥ ${RATIO_GOAL}`,
      measured: `${ratio.toFixed(2)} (rounds ${ratios.map((r) => r.toFixed(2)).join(', ')})`,
      met: ratio >= RATIO_GOAL,
    },
    tables: [
      {
        title: `Cleanup: a step's documents/s against the raw DELETE-and-record statement, ${flags.documents}-document registries`,
        rows,
        notes: [
          'Step: the product step runner (the deployed settings: one step per invocation, the time budget) on the ' +
            `time-based job, stack in dynalite in its own process (+${flags.delay} ms a round trip), invocations back ` +
            'to back until every eligible document is deleted; docs/s over their wall time, fill steps and DynamoDB ' +
            `included. Raw: ${sameIds}, deleted in batches of the same size by \`${rawStatements.record.replace(/\s+/g, ' ')}\`. ` +
            'Both reach PostgreSQL directly. Each run gets a freshly generated registry (same seed); the default batch ' +
            'size runs its rounds in rotated order, other sizes one round each (indicative only: a single pair ' +
            'moves by 2× on this shared machine).',
        ],
      },
      {
        title: `Cleanup: what the deletion record costs, batch ${defaultBatch}, ${flags.documents}-document registries`,
        rows: recordCosts,
        notes: [
          `Informational (no goal). Both delete ${sameIds}, in batches of ${defaultBatch}, in the rounds above ` +
            `(same rotation): \`${rawStatements.bare}\` against the DELETE-and-record statement. Record cost = time ` +
            'per document of DELETE-and-record ÷ that of the bare DELETE; the schema (indexes of deleted_documents ' +
            'included) is infra/sql\u2019s.',
        ],
      },
    ],
  };
}
