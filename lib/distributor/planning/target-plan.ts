import type { QueueInfo } from '../../rabbitmq/management';
import { effectiveLengthLimits, type LengthLimits, type QueuePolicies } from '../../rabbitmq/queue-policies';
import type { TunedTargetSettings } from './capacity';
import { type CapacityInput, targetCapacity } from './capacity';
import {
  backlogPriority,
  keepPriorities,
  type PlannerMode,
  type PlanQueue,
  planShares,
  type QuietFirstSettings,
  quietShares,
  reservePercent,
  targetTopPriority,
} from './planner';
import { stagedQueues } from './tenant-backlog';
import type { QueueWeight } from './weights';
import { byWork, type FairBy } from './weights';

/** What the distributor knows of one target from its configuration (DISTRIBUTOR_TARGETS). */
export interface TargetSettings {
  /** Used when the target has no `x-max-length` argument. */
  maxLength?: number;
  /** Arguments a missing target is created with (missing targets created). */
  arguments?: Record<string, unknown>;
  /** Tune the target's length to a processing-time goal (off when absent; the buffer is then off too). */
  tunedLength?: TunedTargetSettings;
  /** `false`: no target buffer (bufferDepth in planning/capacity.ts): filled to its max length, a throughput-only queue. */
  buffer?: boolean;
}

export interface TargetPlanSettings {
  planner: PlannerMode;
  /** What tenants' shares are equal in (`tenant` planner); absent, messages. */
  fairBy?: FairBy;
  /** The max length of a target without `x-max-length` or a configured one. */
  defaultMaxLength: number;
  targets: Readonly<Record<string, TargetSettings>>;
  /** A target whose free room is below this percentage of its max length is left alone this pass. */
  refillThresholdPercent: number;
  /** What a pass does with staging queues whose target does not exist. */
  missingTarget: 'skip' | 'create';
  /** Arguments of a created target, unless its TargetSettings name some. */
  newTargetArguments: Record<string, unknown>;
  /** Quiet tenants first (planning/planner.ts); absent: every message keeps its priority, no reserve. */
  quietFirst?: QuietFirstSettings;
}

/** What a pass measured of one target while holding its lease: exact depths (AMQP) and the rotation. */
export interface TargetMeasurement {
  target: string;
  /** The target as listed (type, arguments, stats up to ~5 s old); undefined when the listing has no such queue. */
  targetQueue?: Pick<QueueInfo, 'type' | 'arguments' | 'messages_ready' | 'message_bytes_ready'>;
  /** The vhost's policies and operator policies, listed once per pass. */
  policies: QueuePolicies;
  /** Body bytes of a message in the target's staging queues, on average as listed (0 when unknown). */
  stagedMessageBytes: number;
  /** The largest body this execution has moved to the target (byte-limited targets; absent before its first move). */
  movedMessageBytes?: number;
  /** Messages ready in the target; undefined when it does not exist. */
  depth: number | undefined;
  /** Each staging queue with its ready messages (0 when it is gone). */
  staging: readonly { name: string; depth: number }[];
  /** Where the rotation of remainder units stands (RotationStore.readRotation). */
  rotationCursor?: string;
  /** Per tenant, where the rotation among its staging queues stands (`tenant` planner). */
  innerCursors?: Readonly<Record<string, string>>;
  /** Per tenant, the work it is owed (`tenant` planner, fair by work). */
  deficits?: Readonly<Record<string, number>>;
  /** Per tenant, the declared cost of a message learned so far (fair by a declared cost). */
  costs?: Readonly<Record<string, number>>;
  /** Body bytes of a message per staging queue, on average as listed (fair by bytes); absent when unknown. */
  queueBytes?: Readonly<Record<string, number>>;
  /** The length kept this pass: the target's buffer, or its `tunedLength` (mode apply). */
  kept?: CapacityInput['kept'];
}

/** Nothing moves: the target does not exist and missing targets are skipped. */
export interface SkipMissingTarget {
  outcome: 'target-missing';
}

export interface TargetShares {
  /** Messages may move (`distributed`), or the target's room is below the refill threshold. */
  outcome: 'distributed' | 'below-threshold';
  /** Declare the target first, with these arguments (it is missing and missing targets are created). */
  createWith?: Record<string, unknown>;
  maxLength: number;
  depth: number;
  capacity: number;
  /** The target's effective limits (arguments, policy, operator policy) the plan keeps within. */
  limits: LengthLimits;
  /** With a byte limit: the bytes the movers may publish to the target (its limit less what it holds). */
  byteRoom?: number;
  /** The non-empty staging queues, with their weights (and backlog priorities, quiet tenants first). */
  queues: StagedQueue[];
  /**
   * How many messages to move from each queue, in name order; empty when nothing moves. With
   * `priority`, every message moved from that queue gets it (quiet tenants first, backlog mode).
   */
  shares: PlannedShare[];
  /** The rotation cursor to store, when the plan moved it. */
  rotationCursor?: string;
  /** Per tenant, the rotation among its queues to store (`tenant` planner). */
  innerCursors?: Record<string, string>;
  /** Per tenant, the work it is owed to store (`tenant` planner, fair by work), before the moves are charged. */
  deficits?: Record<string, number>;
}

/**
 * A non-empty staging queue as planned; `backlog` is what its tenant holds on the target (quiet
 * tenants first), `priority` what its moved messages get (backlog mode).
 */
export interface StagedQueue extends PlanQueue {
  backlog: number;
  priority?: number;
}

export interface PlannedShare {
  name: string;
  share: number;
  priority?: number;
}

export type TargetPlan = SkipMissingTarget | TargetShares;

/** What to do with one target this pass, from what was measured. Pure. */
export function planTarget(
  measured: TargetMeasurement,
  settings: TargetPlanSettings,
  weight: (queue: string) => QueueWeight,
): TargetPlan {
  let createWith: Record<string, unknown> | undefined;
  if (measured.depth === undefined) {
    if (settings.missingTarget === 'skip') return { outcome: 'target-missing' };
    createWith = settings.targets[measured.target]?.arguments ?? settings.newTargetArguments;
  }
  const quietFirst = settings.quietFirst ?? keepPriorities;
  const { plan, capacity } = targetRoom(measured, settings, quietFirst, createWith);
  const backlog = quietFirst.movePriority === 'backlog';
  if (capacity.capacity === 0 && !(backlog && capacity.quietCapacity > 0)) return plan;

  plan.queues = stagedQueues(measured.staging, { ...settings, ...measured }, weight);
  const quiet = backlog
    ? quietShares(plan.queues, capacity.quietCapacity, quietFirst.quietBacklog, measured.rotationCursor)
    : { shares: [] };
  const quietTaken = new Map(quiet.shares.map((s) => [s.name, s.share]));
  const taken = quiet.shares.reduce((n, s) => n + s.share, 0);
  // The fair plan shares what quiet queues left of its capacity, never past the room.
  const fairCapacity = Math.max(0, Math.min(capacity.capacity, capacity.quietCapacity - taken));
  const planned = planShares({
    capacity: fairCapacity,
    queues: plan.queues.map((q) => ({ ...q, depth: q.depth - (quietTaken.get(q.name) ?? 0) })),
    mode: settings.planner,
    rotationCursor: measured.rotationCursor,
    ...(measured.innerCursors ? { innerCursors: measured.innerCursors } : {}),
    ...(byWork(settings.fairBy) ? { fairBy: 'work', deficits: measured.deficits ?? {} } : {}),
  });
  const merged = planned.shares.map((s) => ({ name: s.name, share: s.share + (quietTaken.get(s.name) ?? 0) }));
  if (merged.some((s) => s.share > 0)) plan.outcome = 'distributed';
  const top = backlog ? movePriorityTop(measured, createWith) : undefined;
  plan.shares = top === undefined ? merged : stampQuietFirst(plan, merged, top, quietFirst.quietBacklog);
  if (planned.innerCursors) plan.innerCursors = planned.innerCursors;
  if (planned.deficits) plan.deficits = planned.deficits;
  // A fair plan with nothing to share leaves the rotation where the quiet queues' took it.
  const cursor = fairCapacity > 0 ? planned.rotationCursor : (quiet.rotationCursor ?? planned.rotationCursor);
  if (cursor !== undefined && cursor !== measured.rotationCursor) plan.rotationCursor = cursor;
  return plan;
}

/** The target's limits, capacity and the plan before any share: what may move, and into how much room. */
function targetRoom(
  measured: TargetMeasurement,
  settings: TargetPlanSettings,
  quietFirst: QuietFirstSettings,
  createWith: Record<string, unknown> | undefined,
) {
  const depth = measured.depth ?? 0;
  const limits = targetLimits(measured, createWith);
  const byteRoom = limits.maxLengthBytes === undefined ? undefined : bytesFree(limits.maxLengthBytes, measured, depth);
  const capacity = targetCapacity({
    queueMaxLength: limits.maxLength,
    ...(byteRoom === undefined ? {} : { bytes: { room: byteRoom, perMessage: messageBytes(measured) } }),
    configuredMaxLength: settings.targets[measured.target]?.maxLength,
    defaultMaxLength: settings.defaultMaxLength,
    ...(measured.kept === undefined ? {} : { kept: measured.kept }),
    depth,
    refillThresholdPercent: settings.refillThresholdPercent,
    reservePercent: reservePercent(quietFirst),
  });
  const plan: TargetShares = {
    outcome: capacity.belowThreshold ? 'below-threshold' : 'distributed',
    ...(createWith ? { createWith } : {}),
    maxLength: capacity.maxLength,
    depth,
    capacity: capacity.capacity,
    limits,
    ...(byteRoom === undefined ? {} : { byteRoom }),
    queues: [],
    shares: [],
  };
  return { plan, capacity };
}

/** With a priority top, every moved message gets its tenant's backlog priority (stamped on `plan.queues` too). */
function stampQuietFirst(
  plan: TargetShares,
  shares: readonly PlannedShare[],
  top: number,
  quietBacklog: number,
): PlannedShare[] {
  plan.queues = plan.queues.map((q) => ({ ...q, priority: backlogPriority(q.backlog, top, quietBacklog) }));
  return stampBacklog(shares, plan.queues);
}

/**
 * The top of the priorities moved messages get: the target's `x-max-priority`, or on a quorum
 * queue QUORUM_TOP_PRIORITY (RabbitMQ 4.0–4.2 serve a quorum queue's messages in two classes,
 * above 4 and the rest: quiet moves go in the high one; 4.3's strict levels keep the order; 3.x
 * ignores them, and the buffer alone bounds the wait).
 */
function movePriorityTop(measured: TargetMeasurement, createWith?: Record<string, unknown>): number | undefined {
  const args = createWith ?? measured.targetQueue?.arguments;
  const type = createWith ? createWith['x-queue-type'] : (measured.targetQueue?.type ?? args?.['x-queue-type']);
  return targetTopPriority(args) ?? (type === 'quorum' ? QUORUM_TOP_PRIORITY : undefined);
}

/** A quorum queue's lowest high priority: quiet moves get it, the other bands 4 and 3 (normal). */
export const QUORUM_TOP_PRIORITY = 5;

/** Each moving share with its queue's backlog priority, from its depth measured exactly before the move. */
function stampBacklog(
  shares: readonly { name: string; share: number }[],
  queues: readonly StagedQueue[],
): PlannedShare[] {
  const priorities = new Map(queues.map((q) => [q.name, q.priority]));
  return shares.map((s) => {
    const priority = priorities.get(s.name);
    return s.share > 0 && priority !== undefined ? { ...s, priority } : s;
  });
}

/**
 * The target's effective length limits, from its arguments (or those it is to be created with)
 * and the policy and operator policy that apply to it (lib/rabbitmq/queue-policies.ts).
 */
export function targetLimits(measured: TargetMeasurement, createWith?: Record<string, unknown>): LengthLimits {
  const args = createWith ?? measured.targetQueue?.arguments ?? {};
  const type = createWith ? createWith['x-queue-type'] : measured.targetQueue?.type;
  return effectiveLengthLimits(
    { name: measured.target, type: typeof type === 'string' ? type : undefined, arguments: args },
    measured.policies,
  );
}

/**
 * The body bytes a byte-limited target may still take. An exact depth of 0 holds none. Otherwise
 * the target holds its depth at the largest size known of a message there, and at least what the
 * listing showed: the listing lags ~5 s, so within one execution it is what the execution moved
 * that counts. With no size known at all, the bytes held cannot be known: nothing moves until an
 * exact reading allows it (issue 34: later rounds refilled the whole byte room and the broker dropped the head).
 */
function bytesFree(limit: number, measured: TargetMeasurement, depth: number): number {
  if (depth === 0) return limit;
  const listed = measured.targetQueue;
  const listedAverage =
    listed && listed.messages_ready > 0 ? (listed.message_bytes_ready ?? 0) / listed.messages_ready : 0;
  const perMessage = Math.max(listedAverage, messageBytes(measured));
  if (perMessage === 0) return 0;
  return Math.max(0, limit - Math.max(listed?.message_bytes_ready ?? 0, depth * perMessage));
}

/** The size a staged message is planned at: the staged average as listed, or what this execution moved. */
function messageBytes(measured: TargetMeasurement): number {
  return Math.max(measured.stagedMessageBytes, measured.movedMessageBytes ?? 0);
}
