import { randomUUID } from 'node:crypto';
import type { DistributorConfig } from '../config/distributor';
import type { QueueInfo } from '../rabbitmq/management';
import { targetCapacity } from './capacity';
import { concurrencyLimit } from './concurrency';
import { groupByTarget, type TargetGroup } from './discovery';
import { moveMessages, type OpenChannel, type StopReason } from './mover';
import { createQueue, readyCounts } from './queue-probe';
import type { DistributorState } from './state-store';
import { planTarget, type TargetMeasurement, type TargetShares } from './target-plan';
import { controlledWeight, type TenantControlStore } from './tenant-controls';
import { tuneLength } from './tuned-length';
import type { TunedLengthStore } from './tuned-length-store';
import { weightOf } from './weights';

export type PassSettings = Pick<
  DistributorConfig,
  | 'DISTRIBUTOR_PLANNER'
  | 'DISTRIBUTOR_DEFAULT_MAX_LENGTH'
  | 'DISTRIBUTOR_TARGETS'
  | 'DISTRIBUTOR_WEIGHTS'
  | 'DISTRIBUTOR_REFILL_THRESHOLD_PERCENT'
  | 'DISTRIBUTOR_MISSING_TARGET'
  | 'DISTRIBUTOR_NEW_TARGET_ARGUMENTS'
  | 'DISTRIBUTOR_MOVE_CONCURRENCY'
  | 'DISTRIBUTOR_MAX_PREFETCH'
  | 'DISTRIBUTOR_SAFETY_MARGIN_MS'
  | 'DISTRIBUTOR_IDLE_STOP_MS'
>;

/** What the distributor tells its operators; the service logs it and turns it into metrics. */
export interface DistributorReport {
  /** Distribution to a target failed; the next pass retries it. */
  targetFailed(target: string, error: unknown): void;
  /** Staging queues hold messages for a target that does not exist (DISTRIBUTOR_MISSING_TARGET=skip). */
  targetMissing(target: string, staging: readonly string[]): void;
  /** Another pass wrote the target's rotation since this one read it; the other's stands. */
  rotationConflict(target: string): void;
  /** The lease could not be given back; it expires by itself. */
  leaseNotReleased(target: string, error: unknown): void;
  /** The invocation has no time left beyond the safety margin: the pass plans but moves nothing. */
  noTimeToMove(remainingMs: number, safetyMarginMs: number): void;
  /** A tuned target's length this pass: applied (mode apply) or only what it would be (mode noop). */
  lengthTuned(tuned: LengthTuned): void;
  /** A pass ended. */
  passed(summary: PassSummary): void;
}

export interface LengthTuned {
  target: string;
  mode: 'apply' | 'noop';
  /** Messages per second consumed, over the configured window; undefined when the broker has no rate yet. */
  rate?: number;
  /** rate × goal, rounded and clamped. */
  goal?: number;
  previous: number;
  /** The length used this pass (apply), or that would be (noop). */
  next: number;
}

/** Where tuned targets' rates come from and their lengths are kept. */
export interface TuningDeps {
  /** Messages per second the target's consumers took over the last `windowSeconds` (management API). */
  rate(target: string, windowSeconds: number): Promise<number | undefined>;
  lengths: TunedLengthStore;
}

/** What a pass needs from the outside world; tests pass real adapters on their own vhost and table. */
export interface DistributorDeps {
  settings: PassSettings;
  /** One paged management API listing of the vhost (ManagementClient.listQueues). */
  listQueues: () => Promise<QueueInfo[]>;
  /** A confirm channel on the pass's connection (AmqpSession.openConfirmChannel). */
  openChannel: OpenChannel;
  state: DistributorState;
  /** Operators' run-time controls (`fairway tenants pause|resume|weight`), read once per pass. */
  controls: TenantControlStore;
  tuning: TuningDeps;
  report: DistributorReport;
  now?: () => number;
}

export interface QueueSummary {
  name: string;
  depth: number;
  weight: number;
  planned: number;
  moved: number;
  requeued: number;
  stopReason?: StopReason;
  error?: string;
}

export type TargetOutcome = 'distributed' | 'leased-elsewhere' | 'target-missing' | 'below-threshold' | 'failed';

export interface TargetSummary {
  target: string;
  outcome: TargetOutcome;
  created: boolean;
  maxLength?: number;
  depth?: number;
  capacity?: number;
  planned: number;
  moved: number;
  requeued: number;
  queues: QueueSummary[];
  error?: string;
}

export interface PassSummary {
  owner: string;
  planner: PassSettings['DISTRIBUTOR_PLANNER'];
  durationMs: number;
  planned: number;
  moved: number;
  requeued: number;
  targets: TargetSummary[];
}

export interface Distributor {
  /** One distribution pass; `remainingMs` is the invocation's time left (context.getRemainingTimeInMillis()). */
  runPass(remainingMs: number): Promise<PassSummary>;
}

/** One pass as its targets see it. */
interface Pass {
  owner: string;
  /** Epoch ms after which no mover takes a new delivery. */
  deadline: number;
  leaseUntil: number;
  /** Bounds the movers of the whole pass (DISTRIBUTOR_MOVE_CONCURRENCY). */
  limit: ReturnType<typeof concurrencyLimit>;
  /** Staging queue weights: the configured rules under this pass's tenant controls (paused: 0). */
  weight: (queue: string) => number;
}

const errorMessage = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Builds the distributor from its settings and adapters (SPEC §3). */
export function createDistributor(deps: DistributorDeps): Distributor {
  const { settings, state, openChannel, report } = deps;
  const now = deps.now ?? Date.now;
  const configuredWeight = weightOf(settings.DISTRIBUTOR_WEIGHTS);

  /** Lease → measure → plan → move, for one target; a failure ends this target alone. */
  async function distributeTarget(group: TargetGroup, pass: Pass): Promise<TargetSummary> {
    const summary: TargetSummary = {
      target: group.target,
      outcome: 'leased-elsewhere',
      created: false,
      planned: 0,
      moved: 0,
      requeued: 0,
      queues: [],
    };
    const failed = (error: unknown) => {
      summary.outcome = 'failed';
      summary.error = errorMessage(error);
      report.targetFailed(group.target, error);
      return summary;
    };
    try {
      if (!(await state.acquireLease(group.target, pass.owner, now(), pass.leaseUntil))) return summary;
    } catch (error) {
      return failed(error);
    }
    try {
      const measured = await measure(group);
      const tunedMaxLength = await tune(measured);
      const plan = planTarget({ ...measured, tunedMaxLength }, settings, pass.weight);
      if (plan.outcome === 'target-missing') {
        report.targetMissing(group.target, group.staging);
        summary.outcome = 'target-missing';
        return summary;
      }
      Object.assign(summary, { maxLength: plan.maxLength, depth: plan.depth, capacity: plan.capacity });
      if (plan.createWith) {
        await createQueue(openChannel, group.target, plan.createWith);
        summary.created = true;
      }
      summary.outcome = plan.outcome;
      summary.queues = await move(measured, plan, pass);
      for (const q of summary.queues) {
        summary.planned += q.planned;
        summary.moved += q.moved;
        summary.requeued += q.requeued;
      }
      return summary;
    } catch (error) {
      return failed(error);
    } finally {
      // An unreleased lease only delays the next pass until it expires.
      await state
        .releaseLease(group.target, pass.owner)
        .catch((error: unknown) => report.leaseNotReleased(group.target, error));
    }
  }

  /**
   * Exact depths (AMQP) and the rotation, read once the lease is held, so a pass that just finished
   * on this target is seen in full: stale listing counts could overfill it.
   */
  async function measure(group: TargetGroup): Promise<TargetMeasurement> {
    const depths = await readyCounts(openChannel, [group.target, ...group.staging]);
    return {
      target: group.target,
      maxLengthArgument: group.targetQueue?.arguments['x-max-length'],
      depth: depths.get(group.target),
      staging: group.staging.map((name) => ({ name, depth: depths.get(name) ?? 0 })),
      rotation: await state.readRotation(group.target),
    };
  }

  /**
   * The tuned length of a target that has `tunedLength` (and exists): a step from the last pass's
   * length toward rate × goal, stored for the next pass. In noop mode only reported.
   */
  async function tune(measured: TargetMeasurement): Promise<number | undefined> {
    const tuned = settings.DISTRIBUTOR_TARGETS[measured.target]?.tunedLength;
    if (!tuned || measured.depth === undefined) return undefined;
    const untuned = targetCapacity({
      maxLengthArgument: measured.maxLengthArgument,
      configuredMaxLength: settings.DISTRIBUTOR_TARGETS[measured.target]?.maxLength,
      defaultMaxLength: settings.DISTRIBUTOR_DEFAULT_MAX_LENGTH,
      depth: 0,
      refillThresholdPercent: 0,
    }).maxLength;
    const [rate, stored] = await Promise.all([
      deps.tuning.rate(measured.target, tuned.rateWindowSeconds),
      tuned.mode === 'apply' ? deps.tuning.lengths.read(measured.target) : undefined,
    ]);
    const previous = stored ?? untuned;
    const { goal, next } = tuneLength(tuned, { rate, previous });
    report.lengthTuned({
      target: measured.target,
      mode: tuned.mode,
      ...(rate === undefined ? {} : { rate }),
      ...(goal === undefined ? {} : { goal }),
      previous,
      next,
    });
    if (tuned.mode === 'noop') return undefined;
    if (next !== stored) await deps.tuning.lengths.write(measured.target, next, now());
    return next;
  }

  /** Stores the moved rotation, then moves every planned share, at most `pass.limit` at a time, until all movers ended. */
  async function move(measured: TargetMeasurement, plan: TargetShares, pass: Pass): Promise<QueueSummary[]> {
    if (plan.rotationCursor !== undefined) {
      if (!(await state.writeRotation(measured.target, plan.rotationCursor, measured.rotation))) {
        report.rotationConflict(measured.target);
      }
    }
    return Promise.all(
      plan.shares.map(({ name, share }) =>
        pass.limit(async (): Promise<QueueSummary> => {
          const result = await moveMessages(
            openChannel,
            {
              source: name,
              target: measured.target,
              count: share,
              prefetch: Math.min(share, settings.DISTRIBUTOR_MAX_PREFETCH),
              deadline: pass.deadline,
              idleStopMs: settings.DISTRIBUTOR_IDLE_STOP_MS,
            },
            now,
          );
          return { ...plan.queues.find((q) => q.name === name)!, planned: share, ...result };
        }),
      ),
    );
  }

  return {
    async runPass(remainingMs) {
      const startedAt = now();
      const owner = randomUUID();
      const deadline = startedAt + Math.max(0, remainingMs - settings.DISTRIBUTOR_SAFETY_MARGIN_MS);
      if (deadline === startedAt) report.noTimeToMove(remainingMs, settings.DISTRIBUTOR_SAFETY_MARGIN_MS);
      const [listing, controls] = await Promise.all([deps.listQueues(), deps.controls.read()]);
      const groups = groupByTarget(listing);
      // A lease lasts as long as this invocation can: a killed pass frees its targets at its timeout.
      const pass: Pass = {
        owner,
        deadline,
        leaseUntil: startedAt + remainingMs,
        limit: concurrencyLimit(settings.DISTRIBUTOR_MOVE_CONCURRENCY),
        weight: controlledWeight(configuredWeight, controls),
      };
      const targets = await Promise.all(groups.map((group) => distributeTarget(group, pass)));
      const summary: PassSummary = {
        owner,
        planner: settings.DISTRIBUTOR_PLANNER,
        durationMs: now() - startedAt,
        planned: targets.reduce((n, t) => n + t.planned, 0),
        moved: targets.reduce((n, t) => n + t.moved, 0),
        requeued: targets.reduce((n, t) => n + t.requeued, 0),
        targets,
      };
      report.passed(summary);
      return summary;
    },
  };
}
