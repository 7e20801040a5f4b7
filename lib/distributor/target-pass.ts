import { errorText } from '../errors';
import { grantable } from '../pass-requests/grants';
import type { LeaseStore } from '../pass-requests/lease-store';
import type { QueuePolicies } from '../rabbitmq/queue-policies';
import { readyCounts } from '../rabbitmq/ready-counts';
import type { OpenChannel } from './moving/channel-pair';
import type { ChannelSlots } from './moving/channel-slots';
import type { ByteBudget } from './moving/move-request';
import { moveShares } from './moving/move-shares';
import { createQueue } from './moving/queue-probe';
import { fitToBudget } from './planning/budget';
import { untunedMaxLength } from './planning/capacity';
import type { TargetGroup } from './planning/discovery';
import type { MoveCostModel } from './planning/move-costs';
import {
  planTarget,
  type TargetMeasurement,
  type TargetPlan,
  type TargetShares,
  targetLimits,
} from './planning/target-plan';
import { type QueueWeight, stagedDepth } from './planning/tenant-backlog';
import { tuneLength } from './planning/tuned-length';
import type { DistributorReport, QueueSummary, TargetSummary } from './report';
import type { DistributorSettings } from './settings';
import { type Rotation, type RotationStore, rotationToPlan, rotationToStore } from './stores/rotation-store';
import type { TunedLengthStore } from './stores/tuned-length-store';
import type { WaitStore } from './stores/wait-store';
import { waitRecorder } from './wait-records';
import { noisyTenants, waitFigures } from './waits';

/** Where tuned targets' rates come from and their lengths are kept. */
export interface TuningDeps {
  /** Messages per second the target's consumers took over the last `windowSeconds` (management API). */
  rate(target: string, windowSeconds: number): Promise<number | undefined>;
  lengths: TunedLengthStore;
}

/** What a target's part of a pass needs from the outside world. */
export interface TargetPassDeps {
  settings: DistributorSettings;
  /** A confirm channel on the pass's connection (AmqpSession.openConfirmChannel). */
  openChannel: OpenChannel;
  /** The targets' leases, held by the execution that serves them. */
  leases: LeaseStore;
  rotations: RotationStore;
  tuning: TuningDeps;
  report: DistributorReport;
  /** The RabbitMQ user the distributor publishes as (the user of AMQP_URL). */
  publisherUser: string;
  /** Where each target's last measured staging waits are kept for `fairway tenants`; none by default. */
  waits?: WaitStore;
  /**
   * With direct routing: the target's grant on the work board (epoch ms until), read consistently
   * once its lease is taken, so that a grant another execution wrote after this one read the board is seen.
   */
  grantOf?: (target: string) => Promise<number | undefined>;
  now?: () => number;
}

/** One pass as its targets see it. */
export interface Pass {
  owner: string;
  /** Epoch ms after which no mover takes a new delivery. */
  deadline: number;
  leaseUntil: number;
  /** Targets whose lease this pass's execution holds: taken on first use, given back when the execution ends. */
  held: Set<string>;
  /** Each held target's rotation as this execution last read or wrote it: only the holder writes it, so it is not read again. */
  rotations: Map<string, Rotation>;
  /** Per byte-limited target, the largest body this execution moved there: it sizes what the target holds. */
  movedBytes: Map<string, number>;
  /** The movers of the whole pass, each on its slot's channel pair (the move concurrency). */
  slots: ChannelSlots;
  /** The vhost's policies and operator policies, listed once per pass (targets' effective limits). */
  policies: QueuePolicies;
  /** Staging queue weights at every level: the configured rules under this pass's tenant controls (paused: 0). */
  weight: (queue: string) => QueueWeight;
  /** No target is granted: a staging queue, seen or not, may weigh 0 (tenant-controls.ts), or the controls were unreadable. */
  grantsWithheld: boolean;
}

/**
 * One target's part of a pass (SPEC §3): lease (kept for the execution) → measure → plan → move. It
 * only orchestrates: the rules are in planning/, the AMQP work in the movers, the state in the stores.
 */
export function targetPass(deps: TargetPassDeps, moveCosts: MoveCostModel) {
  const { settings, leases, rotations, openChannel, report } = deps;
  const now = deps.now ?? Date.now;
  const recordWaits = waitRecorder(deps.waits, report, now);

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
      summary.error = errorText(error);
      report.targetFailed(group.target, error);
      return summary;
    };
    try {
      const lease = await acquire(group.target, pass);
      if (lease !== 'held') {
        summary.outcome = lease;
        return summary;
      }
    } catch (error) {
      return failed(error);
    }
    try {
      const measured = await measure(group, pass);
      summary.staged = stagedDepth(measured.staging, pass.weight, settings.planner);
      const tunedMaxLength = await tune(measured);
      const plan = fitPlan(planTarget({ ...measured, tunedMaxLength }, settings, pass.weight), measured, pass);
      if (plan.outcome === 'target-missing') {
        report.targetMissing(group.target, group.staging);
        summary.outcome = 'target-missing';
        return summary;
      }
      Object.assign(summary, {
        maxLength: plan.maxLength,
        ...(plan.limits.maxLengthBytes === undefined ? {} : { maxLengthBytes: plan.limits.maxLengthBytes }),
        overflow: plan.limits.overflow,
        depth: plan.depth,
        capacity: plan.capacity,
        grantable: grantable(plan.limits, pass.grantsWithheld),
      });
      if (plan.createWith) {
        await createQueue(openChannel, group.target, plan.createWith);
        summary.created = true;
      }
      summary.outcome = plan.outcome;
      const waitsMs: number[] = [];
      summary.queues = await move(measured, plan, pass, waitsMs);
      summary.noisy = noisyTenants(measured.staging, summary.queues);
      const wait = waitFigures(waitsMs);
      if (wait) {
        summary.wait = wait;
        await recordWaits(group.target, summary.queues);
      }
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
    }
  }

  /**
   * Takes the lease once per execution; a target leased by another execution is theirs to serve.
   * A lease taken now may come after another execution granted the target since this one read the
   * board (only a lease holder grants, and it grants before it gives the lease back): such a target
   * is `granted`, for the execution to revoke and wait out.
   */
  async function acquire(target: string, pass: Pass): Promise<'held' | 'leased-elsewhere' | 'granted'> {
    if (pass.held.has(target)) return 'held';
    if (!(await leases.acquireLease(target, pass.owner, now(), pass.leaseUntil))) return 'leased-elsewhere';
    pass.held.add(target);
    const until = deps.grantOf ? await deps.grantOf(target) : undefined;
    return until !== undefined && until > now() ? 'granted' : 'held';
  }

  /**
   * Exact depths (AMQP) and the rotation, read once the lease is held, so a pass that just finished
   * on this target is seen in full: stale listing counts could overfill it. The rotation is read
   * once per lease taken (Pass.rotations).
   */
  async function measure(group: TargetGroup, pass: Pass): Promise<TargetMeasurement & { rotation: Rotation }> {
    const [depths, rotation] = await Promise.all([
      readyCounts(openChannel, [group.target, ...group.staging]),
      pass.rotations.get(group.target) ?? rotations.readRotation(group.target),
    ]);
    pass.rotations.set(group.target, rotation);
    return {
      target: group.target,
      ...(group.targetQueue ? { targetQueue: group.targetQueue } : {}),
      policies: pass.policies,
      stagedMessageBytes: group.stagedMessageBytes,
      ...(pass.movedBytes.has(group.target) ? { movedMessageBytes: pass.movedBytes.get(group.target) } : {}),
      depth: depths.get(group.target),
      staging: group.staging.map((name) => ({ name, depth: depths.get(name) ?? 0 })),
      rotation,
      ...rotationToPlan(rotation),
      ...(group.queueBytes ? { queueBytes: group.queueBytes } : {}),
    };
  }

  /**
   * The tuned length of a target that has `tunedLength` (and exists): a step from the last pass's
   * length toward rate × goal, stored for the next pass. In noop mode only reported.
   */
  async function tune(measured: TargetMeasurement): Promise<number | undefined> {
    const configured = settings.targets[measured.target];
    const tuned = configured?.tunedLength;
    if (!tuned || measured.depth === undefined) return undefined;
    const untuned = untunedMaxLength({
      queueMaxLength: targetLimits(measured).maxLength,
      configuredMaxLength: configured.maxLength,
      defaultMaxLength: settings.defaultMaxLength,
    });
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
    const fitted = fitToBudget(plan.shares, measured.rotationCursor, pass.deadline - now(), moveCosts.costs);
    if (fitted.deferred === 0) return plan;
    return { ...plan, shares: fitted.shares, rotationCursor: fitted.rotationCursor ?? plan.rotationCursor };
  }

  /** Stores the moved rotation, then moves every planned share; the moved messages' waits go to `waitsMs`. */
  async function move(
    measured: TargetMeasurement & { rotation: Rotation },
    plan: TargetShares,
    pass: Pass,
    waitsMs: number[],
  ): Promise<QueueSummary[]> {
    const next = rotationToStore(plan, measured.rotation);
    if (next) {
      // Unknown until the write answers (a failed one may have written): the next pass reads it.
      pass.rotations.delete(measured.target);
      if (await rotations.writeRotation(measured.target, next, measured.rotation)) {
        pass.rotations.set(measured.target, { ...next, version: measured.rotation.version + 1 });
      } else report.rotationConflict(measured.target);
    }
    const queues = new Map(plan.queues.map((q) => [q.name, q]));
    const byteBudget: ByteBudget | undefined = plan.byteRoom === undefined ? undefined : { remaining: plan.byteRoom };
    const moves = {
      target: measured.target,
      deadline: pass.deadline,
      maxPrefetch: settings.maxPrefetch,
      idleStopMs: settings.idleStopMs,
      publisherUser: deps.publisherUser,
      waitsMs,
      ...(byteBudget === undefined ? {} : { byteBudget }),
    };
    const results = await moveShares(pass.slots, plan.shares, moves, moveCosts.learn, now);
    if (byteBudget?.largest !== undefined) {
      pass.movedBytes.set(measured.target, Math.max(pass.movedBytes.get(measured.target) ?? 0, byteBudget.largest));
    }
    return plan.shares.map(({ name, share }, i) => ({ ...queues.get(name)!, planned: share, ...results[i]! }));
  }

  return distributeTarget;
}
