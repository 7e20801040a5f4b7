export interface CapacityInput {
  /**
   * The target's effective `max-length`: the smallest of its `x-max-length` argument, the policy's
   * and the operator policy's (effectiveLengthLimits); anything but a non-negative integer is ignored.
   */
  queueMaxLength: unknown;
  /** Per-target configuration, used when the queue has no max length of its own. */
  configuredMaxLength?: number;
  defaultMaxLength: number;
  /**
   * The length the distributor keeps the target at: its buffer (planning/buffer.ts) or, for a target
   * with `tunedLength`, the tuned length. It replaces the others but never passes the queue's own.
   */
  kept?: { length: number; from: 'buffer' | 'tuned' };
  /** Messages ready in the target now. */
  depth: number;
  /** Below this percentage of the max length free, the target is left alone this pass. */
  refillThresholdPercent: number;
  /** The target's byte limit (`max-length-bytes`), when it has one: its room, and the size of a staged message. */
  bytes?: { room: number; perMessage: number };
  /**
   * This percentage of the max length (rounded down) only quiet staging queues may fill (quiet
   * tenants first): the room the planner shares is that much smaller.
   */
  reservePercent?: number;
}

export interface Capacity {
  maxLength: number;
  maxLengthFrom: 'queue-limit' | 'configuration' | 'default' | 'tuned' | 'buffer';
  depth: number;
  /** max length − depth, floored at 0. */
  room: number;
  /** True when room is below the refill threshold: nothing moves this pass, to limit churn. */
  belowThreshold: boolean;
  /**
   * What the planner may hand out: room less the reserve (and no more staged messages than fit the
   * byte room), or 0 below the threshold.
   */
  capacity: number;
  /** What quiet staging queues may fill in all: the whole room (byte room too), threshold or not. */
  quietCapacity: number;
}

const isLength = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0;

/** A target's max length before tuning: its own limit, else the configured one, else the default. Pure. */
export function untunedMaxLength(
  input: Pick<CapacityInput, 'queueMaxLength' | 'configuredMaxLength' | 'defaultMaxLength'>,
): number {
  if (isLength(input.queueMaxLength)) return input.queueMaxLength;
  return input.configuredMaxLength ?? input.defaultMaxLength;
}

/** How many messages a target can take this pass. Pure. */
export function targetCapacity(input: CapacityInput): Capacity {
  const limit = input.queueMaxLength;
  const hasLimit = isLength(limit);
  // The queue's own limit stays a ceiling: filling past it would drop or refuse messages.
  const [maxLength, maxLengthFrom]: [number, Capacity['maxLengthFrom']] =
    input.kept !== undefined && !(hasLimit && limit < input.kept.length)
      ? [input.kept.length, input.kept.from]
      : hasLimit
        ? [limit, 'queue-limit']
        : input.configuredMaxLength !== undefined
          ? [input.configuredMaxLength, 'configuration']
          : [input.defaultMaxLength, 'default'];
  const room = Math.max(0, maxLength - Math.max(0, input.depth));
  const reserve = Math.floor((maxLength * Math.max(0, input.reservePercent ?? 0)) / 100);
  const sharedRoom = Math.max(0, room - reserve);
  const belowThreshold = sharedRoom * 100 < maxLength * input.refillThresholdPercent;
  const fitBytes = input.bytes
    ? Math.floor(Math.max(0, input.bytes.room) / Math.max(1, input.bytes.perMessage))
    : Number.POSITIVE_INFINITY;
  const capacity = belowThreshold ? 0 : Math.min(sharedRoom, fitBytes);
  const quietCapacity = Math.min(room, fitBytes);
  return { maxLength, maxLengthFrom, depth: input.depth, room, belowThreshold, capacity, quietCapacity };
}

/**
 * A target's length tuned to a processing-time goal (upstream's TunedTargetQueueLengthProvider):
 * the length its consumers get through in `goalSeconds` at the rate they consume now. Pure.
 */
export interface TunedLengthSettings {
  /** How long the messages in the target should take to process. */
  goalSeconds: number;
  minLength: number;
  maxLength: number;
  /** The length moves at most this percentage of its previous value per pass (at least one `roundTo`). */
  maxStepPercent: number;
  /** The goal length is rounded to a multiple of this (upstream rounds to 100). */
  roundTo: number;
}

/** A target's tuning as configured: the length rule, where its rate comes from, and whether it applies. */
export interface TunedTargetSettings extends TunedLengthSettings {
  /** The consumption rate is the average over this many seconds (the management API's rate window). */
  rateWindowSeconds: number;
  /** `noop` only reports the length it would set (upstream's CAF_NOOP_MODE). */
  mode: 'apply' | 'noop';
}

export interface TuningInput {
  /** Messages per second the target's consumers take (acks + no-ack deliveries); undefined when unknown. */
  rate: number | undefined;
  /** The length the last pass used, or the target's untuned length on the first. */
  previous: number;
}

export interface Tuning {
  /** rate × goal, rounded and clamped; undefined without a rate. */
  goal?: number;
  /** The length to use this pass: a step from `previous` toward `goal`, within the clamps. */
  next: number;
}

export function tuneLength(settings: TunedLengthSettings, input: TuningInput): Tuning {
  const clamp = (length: number) => Math.min(settings.maxLength, Math.max(settings.minLength, length));
  const previous = clamp(input.previous);
  if (input.rate === undefined || !Number.isFinite(input.rate) || input.rate < 0) return { next: previous };
  const goal = clamp(Math.round((input.rate * settings.goalSeconds) / settings.roundTo) * settings.roundTo);
  const step = Math.max(settings.roundTo, Math.floor((previous * settings.maxStepPercent) / 100));
  const next = goal > previous ? Math.min(goal, previous + step) : Math.max(goal, previous - step);
  return { goal, next: clamp(next) };
}
