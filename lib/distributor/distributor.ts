import { randomUUID } from 'node:crypto';
import type { DistributorConfig } from '../config/distributor';
import type { LeaseStore } from '../pass-requests/lease-store';
import type { PassRequestEvent } from '../pass-requests/pass-trigger';
import { type RequestPass, schedulesOnly } from '../pass-requests/requester';
import type { QueueInfo } from '../rabbitmq/management';
import { fitToBudget, type MoveCosts } from './budget';
import { targetCapacity } from './capacity';
import { type ChannelSlots, channelSlots } from './channel-slots';
import { groupByTarget, type TargetGroup } from './discovery';
import { type FollowUpSettings, followUpDelay } from './follow-up';
import { type MoveResult, moveOn, type OpenChannel, type StopReason } from './mover';
import { createQueue, readyCounts } from './queue-probe';
import type { RotationStore } from './stores/rotation-store';
import { planTarget, type TargetMeasurement, type TargetPlan, type TargetShares } from './target-plan';
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
> &
  FollowUpSettings;

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
  /** A closed channel or connection ended these staging queues' moves early; nothing is lost, the next pass goes on. */
  movesCutShort(target: string, queues: readonly string[]): void;
  /** The invocation has no time left beyond the safety margin: the pass plans but moves nothing. */
  noTimeToMove(remainingMs: number, safetyMarginMs: number): void;
  /** The pass could not ask for the target's next pass; the schedule's next pass covers it. */
  followUpFailed(target: string, error: unknown): void;
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
  /** The targets' leases, and the requests for passes on them. */
  leases: LeaseStore;
  rotations: RotationStore;
  /** Operators' run-time controls (`fairway tenants pause|resume|weight`), read once per pass. */
  controls: TenantControlStore;
  tuning: TuningDeps;
  report: DistributorReport;
  /** Asks for a target's next pass (passRequester); by default passes run on the schedule alone. */
  requestPass?: RequestPass;
  /** The RabbitMQ user the distributor publishes as (the user of AMQP_URL). */
  publisherUser: string;
  now?: () => number;
}

export interface QueueSummary {
  name: string;
  depth: number;
  weight: number;
  planned: number;
  moved: number;
  requeued: number;
  /** Set aside in the target's parking queue: the broker would refuse them from the distributor. */
  parked: number;
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
  /** Set aside in the target's parking queue: the broker would refuse them from the distributor. */
  parked: number;
  queues: QueueSummary[];
  error?: string;
  /** The next pass for this target was asked for, this many ms from the end of this one. */
  followUpMs?: number;
}

export interface PassSummary {
  owner: string;
  /** The request that started this pass; absent for a scheduled pass. */
  request?: { requestId: string; target: string; delayMs: number };
  planner: PassSettings['DISTRIBUTOR_PLANNER'];
  durationMs: number;
  planned: number;
  moved: number;
  requeued: number;
  /** Set aside in the target's parking queue: the broker would refuse them from the distributor. */
  parked: number;
  targets: TargetSummary[];
}

export interface Distributor {
  /**
   * One distribution pass; `remainingMs` is the invocation's time left (context.getRemainingTimeInMillis()).
   * With a `request`, the pass covers its target alone.
   */
  runPass(remainingMs: number, request?: PassRequestEvent): Promise<PassSummary>;
}

/** One pass as its targets see it. */
interface Pass {
  owner: string;
  /** Epoch ms after which no mover takes a new delivery. */
  deadline: number;
  leaseUntil: number;
  /** The movers of the whole pass, each on its slot's channel pair (DISTRIBUTOR_MOVE_CONCURRENCY). */
  slots: ChannelSlots;
  request?: PassRequestEvent;
  /** Staging queue weights: the configured rules under this pass's tenant controls (paused: 0). */
  weight: (queue: string) => number;
}

const errorMessage = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Builds the distributor from its settings and adapters (SPEC §3). */
export function createDistributor(deps: DistributorDeps): Distributor {
  const { settings, leases, rotations, openChannel, report } = deps;
  const now = deps.now ?? Date.now;
  const requestPass = deps.requestPass ?? schedulesOnly;
  const configuredWeight = weightOf(settings.DISTRIBUTOR_WEIGHTS);
  // What movers cost, learned over the container's passes (a cautious start: 10 ms a queue,
  // 0.5 ms a message); a pass moves only what fits before its deadline.
  const costs: MoveCosts = { perQueueMs: 10, perMessageMs: 0.5, slots: settings.DISTRIBUTOR_MOVE_CONCURRENCY };
  const learn = (share: number, ms: number) => {
    if (share <= 10) costs.perQueueMs = 0.8 * costs.perQueueMs + 0.2 * ms;
    else costs.perMessageMs = 0.8 * costs.perMessageMs + (0.2 * Math.max(0, ms - costs.perQueueMs)) / share;
  };

  /** Lease → measure → plan → move, for one target; a failure ends this target alone. */
  async function distributeTarget(group: TargetGroup, pass: Pass): Promise<TargetSummary> {
    const summary: TargetSummary = {
      target: group.target,
      outcome: 'leased-elsewhere',
      created: false,
      planned: 0,
      moved: 0,
      requeued: 0,
      parked: 0,
      queues: [],
    };
    const failed = (error: unknown) => {
      summary.outcome = 'failed';
      summary.error = errorMessage(error);
      report.targetFailed(group.target, error);
      return summary;
    };
    try {
      if (!(await acquire(group.target, pass))) return summary;
    } catch (error) {
      return failed(error);
    }
    let staged = 0;
    let wanted = false;
    try {
      const measured = await measure(group);
      // A paused queue (weight 0) waits for its tenant to be resumed, not for a follow-up.
      staged = measured.staging.reduce((n, q) => n + (pass.weight(q.name) > 0 ? q.depth : 0), 0);
      const tunedMaxLength = await tune(measured);
      const plan = fitPlan(planTarget({ ...measured, tunedMaxLength }, settings, pass.weight), measured, pass);
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
      const cutShort = summary.queues.filter((q) => q.stopReason === 'channel-closed').map((q) => q.name);
      if (cutShort.length > 0) report.movesCutShort(group.target, cutShort);
      for (const q of summary.queues) {
        summary.planned += q.planned;
        summary.moved += q.moved;
        summary.requeued += q.requeued;
        summary.parked += q.parked;
      }
      return summary;
    } catch (error) {
      return failed(error);
    } finally {
      // An unreleased lease only delays the next pass until it expires.
      await leases.releaseLease(group.target, pass.owner).then(
        (released) => (wanted = released.wanted),
        (error: unknown) => report.leaseNotReleased(group.target, error),
      );
      // After the release: a request that found the lease held set `wanted`, which the release returned.
      await followUp(summary, staged, wanted, pass);
    }
  }

  /** Takes the lease; a requested pass that finds it held hands its request to the holder. */
  async function acquire(target: string, pass: Pass): Promise<boolean> {
    const requestId = pass.request?.target === target ? pass.request.requestId : undefined;
    if (await leases.acquireLease(target, pass.owner, now(), pass.leaseUntil, requestId)) return true;
    // Handed over: the holder asks for the next pass. Not handed over: the lease was freed meanwhile (or the
    // request was replaced as overdue), so try it once more.
    if (requestId === undefined || (await leases.handOver(target, requestId, now()))) return false;
    return leases.acquireLease(target, pass.owner, now(), pass.leaseUntil, requestId);
  }

  async function followUp(summary: TargetSummary, staged: number, wanted: boolean, pass: Pass): Promise<void> {
    const previousDelayMs = pass.request?.target === summary.target ? pass.request.delayMs : undefined;
    const delayMs = followUpDelay({ ...summary, staged, wanted, previousDelayMs }, settings);
    if (delayMs === undefined) return;
    try {
      if ((await requestPass(summary.target, delayMs)) !== 'off') summary.followUpMs = delayMs;
    } catch (error) {
      report.followUpFailed(summary.target, error);
    }
  }

  /**
   * Exact depths (AMQP) and the rotation, read once the lease is held, so a pass that just finished
   * on this target is seen in full: stale listing counts could overfill it.
   */
  async function measure(group: TargetGroup): Promise<TargetMeasurement> {
    const [depths, rotation] = await Promise.all([
      readyCounts(openChannel, [group.target, ...group.staging]),
      rotations.readRotation(group.target),
    ]);
    return {
      target: group.target,
      maxLengthArgument: group.targetQueue?.arguments['x-max-length'],
      depth: depths.get(group.target),
      staging: group.staging.map((name) => ({ name, depth: depths.get(name) ?? 0 })),
      rotation,
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

  /**
   * Keeps the shares the movers can finish before the deadline, in rotation order; the rest go
   * first in the next pass (the rotation cursor stops at the last share kept).
   */
  function fitPlan(plan: TargetPlan, measured: TargetMeasurement, pass: Pass): TargetPlan {
    if (plan.outcome === 'target-missing' || plan.shares.length === 0) return plan;
    const fitted = fitToBudget(plan.shares, measured.rotation.cursor, pass.deadline - now(), costs);
    if (fitted.deferred === 0) return plan;
    return { ...plan, shares: fitted.shares, rotationCursor: fitted.rotationCursor ?? plan.rotationCursor };
  }

  /**
   * Stores the moved rotation, then moves every planned share, one mover per slot at a time on the
   * slot's channel pair, until all movers ended. A mover whose turn comes after the deadline does
   * not start: its queue keeps its messages for the next pass.
   */
  async function move(measured: TargetMeasurement, plan: TargetShares, pass: Pass): Promise<QueueSummary[]> {
    if (plan.rotationCursor !== undefined) {
      if (!(await rotations.writeRotation(measured.target, plan.rotationCursor, measured.rotation))) {
        report.rotationConflict(measured.target);
      }
    }
    const queues = new Map(plan.queues.map((q) => [q.name, q]));
    const late: MoveResult = { moved: 0, requeued: 0, parked: 0, stopReason: 'deadline' };
    return Promise.all(
      plan.shares.map(async ({ name, share }): Promise<QueueSummary> => {
        const result = await pass.slots
          .use(async (pair) => {
            if (now() >= pass.deadline) return { value: late, reusable: true };
            const started = now();
            const moved = await moveOn(
              pair,
              {
                source: name,
                target: measured.target,
                count: share,
                prefetch: Math.min(share, settings.DISTRIBUTOR_MAX_PREFETCH),
                deadline: pass.deadline,
                idleStopMs: settings.DISTRIBUTOR_IDLE_STOP_MS,
                publisherUser: deps.publisherUser,
              },
              now,
            );
            if (share > 0) learn(share, now() - started);
            return { value: moved.result, reusable: moved.reusable };
          })
          .catch(
            (error: unknown): MoveResult => ({ ...late, stopReason: 'channel-closed', error: errorMessage(error) }),
          );
        return { ...queues.get(name)!, planned: share, ...result };
      }),
    );
  }

  return {
    async runPass(remainingMs, request) {
      const startedAt = now();
      const owner = randomUUID();
      const deadline = startedAt + Math.max(0, remainingMs - settings.DISTRIBUTOR_SAFETY_MARGIN_MS);
      if (deadline === startedAt) report.noTimeToMove(remainingMs, settings.DISTRIBUTOR_SAFETY_MARGIN_MS);
      const [listing, controls] = await Promise.all([deps.listQueues(), deps.controls.read()]);
      // A requested pass looks at its target's every staging queue: the listed counts lag the router by ~5 s.
      const groups = request
        ? groupByTarget(listing, request.target).filter((group) => group.target === request.target)
        : groupByTarget(listing);
      // A lease lasts as long as this invocation can: a killed pass frees its targets at its timeout.
      const slots = channelSlots(settings.DISTRIBUTOR_MOVE_CONCURRENCY, openChannel);
      const pass: Pass = {
        owner,
        deadline,
        leaseUntil: startedAt + remainingMs,
        slots,
        weight: controlledWeight(configuredWeight, controls),
        request,
      };
      const targets = await Promise.all(groups.map((group) => distributeTarget(group, pass))).finally(() =>
        slots.close(),
      );
      const summary: PassSummary = {
        owner,
        ...(request
          ? { request: { requestId: request.requestId, target: request.target, delayMs: request.delayMs } }
          : {}),
        planner: settings.DISTRIBUTOR_PLANNER,
        durationMs: now() - startedAt,
        planned: targets.reduce((n, t) => n + t.planned, 0),
        moved: targets.reduce((n, t) => n + t.moved, 0),
        requeued: targets.reduce((n, t) => n + t.requeued, 0),
        parked: targets.reduce((n, t) => n + t.parked, 0),
        targets,
      };
      report.passed(summary);
      return summary;
    },
  };
}
