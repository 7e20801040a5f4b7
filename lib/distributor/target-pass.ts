import type { ConfirmChannel } from 'amqplib';
import { errorText } from '../platform/errors';
import { closeWithin } from '../rabbitmq/close';
import type { QueuePolicies } from '../rabbitmq/queue-policies';
import { readyCounts, readyCountsOn } from '../rabbitmq/ready-counts';
import { grantable } from '../work-board/grants';
import { keptLengths, type TuningDeps } from './kept-length';
import type { OpenChannel } from './moving/channel-pair';
import type { ChannelSlots } from './moving/channel-slots';
import type { ByteBudget } from './moving/move-request';
import { moveShares } from './moving/move-shares';
import { createQueue } from './moving/queue-probe';
import { fitToBudget } from './planning/budget';
import type { TargetGroup } from './planning/discovery';
import { workCounter } from './planning/fair-by';
import type { MoveCostModel } from './planning/move-costs';
import { planTarget, type TargetMeasurement, type TargetPlan, type TargetShares } from './planning/target-plan';
import { type QueueWeight, stagedDepth } from './planning/tenant-backlog';
import { rotationAfterMoves } from './planning/work-charge';
import type { DistributorReport, QueueSummary, TargetSummary } from './report';
import type { DistributorSettings } from './settings';
import { LEASE_MS, type LeaseStore } from './stores/lease-store';
import { type Rotation, type RotationStore, rotationToPlan, rotationToStore } from './stores/rotation-store';
import type { WaitStore } from './stores/wait-store';
import { leaseTaker } from './target-lease';
import { mergeQueues, waitRecorder } from './wait-recorder';
import { noisyTenants, waitFigures } from './waits';

/** A busy target is refilled this long a round at most; then the board and tenant controls are read again. */
export const REFILL_STINT_MS = 2_000;
/** No refill starts with less time than this before the pass deadline. */
const REFILL_MIN_MS = 500;

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
  sleep?: (ms: number) => Promise<void>;
  /** With direct routing: the target's grant (epoch ms until), read consistently once its lease is taken (a newer grant is seen). */
  grantOf?: (target: string) => Promise<number | undefined>;
  now?: () => number;
}

/** One pass as its targets see it. */
export interface Pass {
  owner: string;
  /** Epoch ms after which no mover takes a new delivery. */
  deadline: number;
  /** Targets whose lease this execution holds, each until when: taken on first use, renewed while served, given back at its end. */
  held: Map<string, number>;
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

/** One target's part of a pass (SPEC §3): lease → measure → plan → move; the rules are in planning/, the AMQP work in moving/. */
export function targetPass(deps: TargetPassDeps, moveCosts: MoveCostModel) {
  const { settings, leases, rotations, openChannel, report } = deps;
  const now = deps.now ?? Date.now;
  const recordWaits = waitRecorder(deps.waits, report, now);
  const acquire = leaseTaker(leases, deps.grantOf, now);
  const kept_ = keptLengths(settings, deps.tuning, report, now);
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  // About five readings a horizon: a buffer refilled at half its depth never runs dry between two.
  const refillPollMs = Math.max(10, Math.round(settings.buffer.horizonMs / 5));
  /** Per target, the rotation as stored, while the one in Pass.rotations moved on unwritten. */
  const unwritten = new Map<string, Rotation>();

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
    // Renewed while this target is served, however long its moves take.
    const heartbeat = setInterval(() => void acquire(group.target, pass).catch(() => undefined), LEASE_MS / 3);
    try {
      const waitsMs: number[] = [];
      let step = await refill(group, pass, summary, waitsMs);
      if (step === 'target-missing') {
        report.targetMissing(group.target, group.staging);
        summary.outcome = 'target-missing';
        return summary;
      }
      // A busy buffered target is topped up at its drain's pace from AMQP readings alone: no
      // DynamoDB request until the stint ends (the rotation is written once, then).
      const stintEnds = now() + REFILL_STINT_MS;
      const firstMoved = summary.moved;
      // One channel for the stint's depth reads: opening them per refill costs more than the reads.
      let depths: ConfirmChannel | undefined;
      try {
        while (step.busy && now() < stintEnds && pass.deadline - now() > REFILL_MIN_MS) {
          await sleep(refillPollMs);
          // Lost (it lapsed, and another execution took it): stop moving.
          if (!pass.held.has(group.target)) break;
          depths ??= await openChannel();
          step = await refill(group, pass, summary, waitsMs, depths);
          if (step === 'target-missing') break;
        }
      } finally {
        if (depths) await closeWithin(depths);
      }
      await writeRotation(group.target, pass);
      // Busy: its workers drained it this stint (a refill after the first moved) and work is left:
      // the next round takes it again at once. A target whose workers stopped backs off instead.
      if (step !== 'target-missing' && step.busy && summary.moved > firstMoved) summary.busy = true;
      const wait = waitFigures(waitsMs);
      if (wait) {
        summary.wait = wait;
        await recordWaits(group.target, summary.queues, summary.noisy?.byBacklog);
      }
      const cutShort = summary.queues.filter((q) => q.stopReason === 'channel-closed').map((q) => q.name);
      if (cutShort.length > 0) report.movesCutShort(group.target, cutShort);
      return summary;
    } catch (error) {
      return failed(error);
    } finally {
      clearInterval(heartbeat);
    }
  }

  /**
   * One refill: measure → plan → move, its figures added to `summary` (the first sets the target's
   * figures). Busy when the target is buffered, work stays staged and the refill was not refused.
   */
  async function refill(
    group: TargetGroup,
    pass: Pass,
    summary: TargetSummary,
    waitsMs: number[],
    depths?: ConfirmChannel,
  ): Promise<'target-missing' | { busy: boolean }> {
    const first = summary.depth === undefined;
    summary.refills = (summary.refills ?? 0) + 1;
    const measured = await measure(group, pass, depths);
    // A paused queue (weight 0) waits for its tenant to be resumed, not for a follow-up.
    const staged = stagedDepth(measured.staging, pass.weight, settings.planner);
    const kept = first || kept_.buffered(group.target) ? await kept_.of(measured) : undefined;
    const plan = fitPlan(planTarget({ ...measured, ...(kept ? { kept } : {}) }, settings, pass.weight), measured, pass);
    if (plan.outcome === 'target-missing') return 'target-missing';
    if (first) {
      Object.assign(summary, {
        staged,
        maxLength: plan.maxLength,
        ...(plan.limits.maxLengthBytes === undefined ? {} : { maxLengthBytes: plan.limits.maxLengthBytes }),
        overflow: plan.limits.overflow,
        depth: plan.depth,
        capacity: plan.capacity,
        grantable: grantable(plan.limits, pass.grantsWithheld),
        outcome: plan.outcome,
      });
    } else if (plan.outcome === 'distributed') summary.outcome = 'distributed';
    if (plan.createWith) {
      await createQueue(openChannel, group.target, plan.createWith);
      summary.created = true;
    }
    const queues = plan.shares.length > 0 ? await move(measured, plan, pass, waitsMs) : [];
    let moved = 0;
    let gone = 0;
    for (const q of queues) {
      summary.planned += q.planned;
      summary.moved += q.moved;
      summary.requeued += q.requeued;
      summary.parked += q.parked;
      moved += q.moved;
      gone += q.moved + q.parked;
    }
    summary.queues = mergeQueues(summary.queues, queues);
    summary.noisy = noisyTenants(measured.staging, summary.queues);
    kept_.moved(group.target, moved);
    const refused = plan.shares.some((s) => s.share > 0) && gone === 0;
    return { busy: kept_.buffered(group.target) && !refused && staged - gone > 0 };
  }

  /**
   * Exact depths (AMQP) and the rotation, read once the lease is held, so a pass that just finished
   * on this target is seen in full: stale listing counts could overfill it. The rotation is read
   * once per lease taken (Pass.rotations).
   */
  async function measure(
    group: TargetGroup,
    pass: Pass,
    channel?: ConfirmChannel,
  ): Promise<TargetMeasurement & { rotation: Rotation }> {
    const names = [group.target, ...group.staging];
    const [depths, rotation] = await Promise.all([
      channel ? readyCountsOn(channel, names) : readyCounts(openChannel, names),
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

  /** Writes the rotation the stint moved on, once (an unchanged one needs no write). */
  async function writeRotation(target: string, pass: Pass): Promise<void> {
    const read = unwritten.get(target);
    const moved = pass.rotations.get(target);
    unwritten.delete(target);
    if (read === undefined || moved === undefined) return;
    const next = rotationToStore(rotationToPlan(moved), read);
    if (!next) return;
    // Unknown until the write answers (a failed one may have written): the next pass reads it.
    pass.rotations.delete(target);
    if (await rotations.writeRotation(target, next, read)) {
      pass.rotations.set(target, { ...next, version: read.version + 1 });
    } else report.rotationConflict(target);
  }

  /** The shares the movers can finish before the deadline, in rotation order; the rest go first next pass. */
  function fitPlan(plan: TargetPlan, measured: TargetMeasurement, pass: Pass): TargetPlan {
    if (plan.outcome === 'target-missing' || plan.shares.length === 0) return plan;
    const fitted = fitToBudget(plan.shares, measured.rotationCursor, pass.deadline - now(), moveCosts.costs);
    if (fitted.deferred === 0) return plan;
    return { ...plan, shares: fitted.shares, rotationCursor: fitted.rotationCursor ?? plan.rotationCursor };
  }

  /** Moves every planned share, then keeps the rotation with the moves' work charged (written when the stint ends). */
  async function move(
    measured: TargetMeasurement & { rotation: Rotation },
    plan: TargetShares,
    pass: Pass,
    waitsMs: number[],
  ): Promise<QueueSummary[]> {
    const queues = new Map(plan.queues.map((q) => [q.name, q]));
    const byteBudget: ByteBudget | undefined = plan.byteRoom === undefined ? undefined : { remaining: plan.byteRoom };
    const workOf = workCounter(settings.fairBy);
    const moves = {
      target: measured.target,
      deadline: pass.deadline,
      maxPrefetch: settings.maxPrefetch,
      idleStopMs: settings.idleStopMs,
      publisherUser: deps.publisherUser,
      waitsMs,
      ...(byteBudget === undefined ? {} : { byteBudget }),
      ...(workOf ? { workOf } : {}),
    };
    const results = await moveShares(pass.slots, plan.shares, moves, moveCosts.learn, now);
    if (byteBudget?.largest !== undefined) {
      pass.movedBytes.set(measured.target, Math.max(pass.movedBytes.get(measured.target) ?? 0, byteBudget.largest));
    }
    const moved = plan.shares.map(({ name, share }, i) => ({ ...queues.get(name)!, planned: share, ...results[i]! }));
    const next = rotationToStore(rotationAfterMoves(settings.fairBy, measured, plan, moved), measured.rotation);
    if (next && !unwritten.has(measured.target)) unwritten.set(measured.target, measured.rotation);
    if (next) pass.rotations.set(measured.target, { ...next, version: measured.rotation.version });
    return moved;
  }

  return distributeTarget;
}
