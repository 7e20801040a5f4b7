import type { ConfirmChannel } from 'amqplib';
import type { QueuePolicies } from '../rabbitmq/queue-policies';
import { readyCounts, readyCountsOn } from '../rabbitmq/ready-counts';
import type { DistributorSettings } from './config';
import type { keptLengths, TuningDeps } from './kept-length';
import type { ChannelSlots, OpenChannel } from './moving/channels';
import { createQueue } from './moving/channels';
import type { ByteBudget } from './moving/move-request';
import { moveShares } from './moving/mover';
import type { MoveCostModel } from './planning/budget';
import { fitToBudget } from './planning/budget';
import { untunedMaxLength } from './planning/capacity';
import { planTarget, type TargetMeasurement, type TargetPlan, type TargetShares } from './planning/target-plan';
import type { TargetGroup } from './planning/tenant-backlog';
import { type QueueWeight, rotationAfterMoves, stagedDepth } from './planning/tenant-backlog';
import { workCounter } from './planning/weights';
import type { DistributorReport, QueueSummary, TargetSummary } from './report';
import type { LeaseStore } from './stores/lease-store';
import { type Rotation, type RotationStore, rotationToPlan, rotationToStore } from './stores/rotation-store';
import type { WaitStore } from './stores/wait-store';
import { mergeQueues } from './stores/wait-store';
import { noisyTenants } from './waits';

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
  /** Per target, the rotation as stored while the one in `rotations` moved on unwritten (written when its stint ends). */
  storedRotations: Map<string, Rotation>;
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

/** What every target's part of a pass uses, made once per container (targetPass). */
export interface TargetTools {
  deps: TargetPassDeps;
  moveCosts: MoveCostModel;
  kept: ReturnType<typeof keptLengths>;
  now: () => number;
}

/** One target's stint in a pass: what its refills add up. */
export interface Stint {
  group: TargetGroup;
  pass: Pass;
  summary: TargetSummary;
  /** The waits of the messages the stint moved. */
  waitsMs: number[];
}

/** The result of one refill: the target is gone, or whether it is busy (to be refilled again at once). */
export type Refilled = 'target-missing' | { busy: boolean };

/**
 * One refill: measure → plan → move, its figures added to the stint's summary (the first sets the
 * target's figures). Busy when the target is buffered, work stays staged and the refill was not refused.
 */
export async function refill(tools: TargetTools, stint: Stint, depths?: ConfirmChannel): Promise<Refilled> {
  const { deps, kept } = tools;
  const { group, pass, summary } = stint;
  const first = summary.depth === undefined;
  summary.refills = (summary.refills ?? 0) + 1;
  const measured = await measure(deps, group, pass, depths);
  // A paused queue (weight 0) waits for its tenant to be resumed, not for a follow-up.
  const staged = stagedDepth(measured.staging, pass.weight, deps.settings.planner);
  const length = first || kept.buffered(group.target) ? await kept.of(measured) : undefined;
  const planned = planTarget({ ...measured, ...(length ? { kept: length } : {}) }, deps.settings, pass.weight);
  const plan = fitPlan(tools, planned, measured, pass);
  if (plan.outcome === 'target-missing') return 'target-missing';
  if (first)
    Object.assign(summary, {
      staged,
      ...targetFigures(plan, pass, deps.settings.targets[group.target]?.maxLength, deps.settings),
    });
  else if (plan.outcome === 'distributed') summary.outcome = 'distributed';
  if (plan.createWith) {
    await createQueue(deps.openChannel, group.target, plan.createWith);
    summary.created = true;
  }
  const queues = plan.shares.length > 0 ? await move(tools, stint, measured, plan) : [];
  const { moved, gone } = addUp(summary, queues);
  summary.queues = mergeQueues(summary.queues, queues);
  summary.noisy = noisyTenants(measured.staging, summary.queues);
  kept.moved(group.target, moved);
  const refused = plan.shares.some((s) => s.share > 0) && gone === 0;
  return { busy: kept.buffered(group.target) && !refused && staged - gone > 0 };
}

/** The target's figures its first refill reports. */
function targetFigures(
  plan: Exclude<TargetPlan, { outcome: 'target-missing' }>,
  pass: Pass,
  configuredMaxLength: number | undefined,
  settings: Pick<DistributorSettings, 'defaultMaxLength'>,
): Partial<TargetSummary> {
  const untuned = untunedMaxLength({
    queueMaxLength: plan.limits.maxLength,
    configuredMaxLength,
    defaultMaxLength: settings.defaultMaxLength,
  });
  return {
    maxLength: plan.maxLength,
    untunedMaxLength: untuned,
    ...(plan.limits.maxLength === undefined ? {} : { lengthLimit: plan.limits.maxLength }),
    ...(plan.limits.maxLengthBytes === undefined ? {} : { maxLengthBytes: plan.limits.maxLengthBytes }),
    overflow: plan.limits.overflow,
    depth: plan.depth,
    capacity: plan.capacity,
    grantsWithheld: pass.grantsWithheld,
    outcome: plan.outcome,
  };
}

/** Adds a refill's queues to the summary; what it moved, and what left staging (moved or parked). */
function addUp(summary: TargetSummary, queues: readonly QueueSummary[]): { moved: number; gone: number } {
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
  return { moved, gone };
}

/**
 * Exact depths (AMQP) and the rotation, read once the lease is held, so a pass that just finished
 * on this target is seen in full: stale listing counts could overfill it. The rotation is read
 * once per lease taken (Pass.rotations).
 */
async function measure(
  deps: TargetPassDeps,
  group: TargetGroup,
  pass: Pass,
  channel?: ConfirmChannel,
): Promise<TargetMeasurement & { rotation: Rotation }> {
  const names = [group.target, ...group.staging];
  const [depths, rotation] = await Promise.all([
    channel ? readyCountsOn(channel, names) : readyCounts(deps.openChannel, names),
    pass.rotations.get(group.target) ?? deps.rotations.readRotation(group.target),
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
 * Keeps the shares the movers can finish before the deadline, in rotation order; the rest go
 * first in the next pass (the rotation cursor stops at the last share kept).
 */
function fitPlan(tools: TargetTools, plan: TargetPlan, measured: TargetMeasurement, pass: Pass): TargetPlan {
  if (plan.outcome === 'target-missing' || plan.shares.length === 0) return plan;
  const fitted = fitToBudget(plan.shares, measured.rotationCursor, pass.deadline - tools.now(), tools.moveCosts.costs);
  if (fitted.deferred === 0) return plan;
  return { ...plan, shares: fitted.shares, rotationCursor: fitted.rotationCursor ?? plan.rotationCursor };
}

/** Moves every planned share, then keeps the rotation with the moves' work charged (written when the stint ends); the moved messages' waits go to the stint's. */
async function move(
  tools: TargetTools,
  stint: Stint,
  measured: TargetMeasurement & { rotation: Rotation },
  plan: TargetShares,
): Promise<QueueSummary[]> {
  const { deps, moveCosts, now } = tools;
  const { pass } = stint;
  const queues = new Map(plan.queues.map((q) => [q.name, q]));
  const byteBudget: ByteBudget | undefined = plan.byteRoom === undefined ? undefined : { remaining: plan.byteRoom };
  const workOf = workCounter(deps.settings.fairBy);
  const moves = {
    target: measured.target,
    deadline: pass.deadline,
    maxPrefetch: deps.settings.maxPrefetch,
    idleStopMs: deps.settings.idleStopMs,
    publisherUser: deps.publisherUser,
    waitsMs: stint.waitsMs,
    ...(byteBudget === undefined ? {} : { byteBudget }),
    ...(workOf ? { workOf } : {}),
  };
  const results = await moveShares(pass.slots, plan.shares, moves, moveCosts.learn, now);
  if (byteBudget?.largest !== undefined) {
    pass.movedBytes.set(measured.target, Math.max(pass.movedBytes.get(measured.target) ?? 0, byteBudget.largest));
  }
  const moved = plan.shares.map(({ name, share }, i) => ({ ...queues.get(name)!, planned: share, ...results[i]! }));
  const next = rotationToStore(rotationAfterMoves(deps.settings.fairBy, measured, plan, moved), measured.rotation);
  if (next) {
    if (!pass.storedRotations.has(measured.target)) pass.storedRotations.set(measured.target, measured.rotation);
    pass.rotations.set(measured.target, { ...next, version: measured.rotation.version });
  }
  return moved;
}
