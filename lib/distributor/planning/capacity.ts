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
   * The length the distributor keeps the target at: its buffer (bufferDepth, below) or, for a target
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

/**
 * The target buffer (docs/distributor.md "Target buffer"): a target's ready depth is kept at what
 * its workers take before the next refill, its drain rate × a short horizon, never above its
 * effective max length; a message entering it waits about one horizon, whatever the queue type.
 */
export interface BufferSettings {
  /** How long the target's ready messages should last at its drain rate; 0: no buffer. */
  horizonMs: number;
}

/** The buffer never plans below this: a drain measured over a few ms can read 0 while workers are busy. */
export const MIN_DEPTH = 5;
/**
 * A target with no drain measured yet starts as shallow as the buffer ever keeps it: its first pass
 * never fills it to its max length, and the next readings deepen it within a few refills.
 */
export const START_DEPTH = MIN_DEPTH;
/** Weight of a new drain reading in the smoothed rate (about the last 5 readings count). */
const SMOOTHING = 0.2;

/** What an execution knows of a target's drain, from its own readings over AMQP. */
export interface Drain {
  /** Messages a second its consumers took, smoothed; undefined until two readings. */
  perSecond?: number;
  /** The depth it left (read + moved) and when. */
  left: number;
  at: number;
}

/**
 * The drain after a reading of `depth` at `at`, from the last one. A target found empty may have
 * drained faster than it could show (its workers waited): the rate is then at least that reading,
 * unsmoothed, so a buffer too shallow for its workers deepens at the next refill. (Doubling the
 * rate instead ran away with workers of prefetch 1, which empty a shallow target between two
 * readings at any rate: 25–48 ready at 10 msg/s, 2.5–5 s of wait, for a buffer of 5.) Pure.
 */
export function nextDrain(last: Drain | undefined, depth: number, at: number): Drain['perSecond'] {
  if (last === undefined || at <= last.at) return last?.perSecond;
  const measured = Math.max(0, last.left - depth) / ((at - last.at) / 1000);
  const smoothed = last.perSecond === undefined ? measured : last.perSecond + SMOOTHING * (measured - last.perSecond);
  if (depth === 0 && last.left > 0) return Math.max(smoothed, measured);
  return smoothed;
}

/** The depth to keep in a target draining `perSecond` (START_DEPTH without a rate), never above `maxLength`. Pure. */
export function bufferDepth(perSecond: number | undefined, maxLength: number, settings: BufferSettings): number {
  const wanted =
    perSecond === undefined ? START_DEPTH : Math.max(MIN_DEPTH, Math.ceil((perSecond * settings.horizonMs) / 1000));
  return Math.min(maxLength, wanted);
}
