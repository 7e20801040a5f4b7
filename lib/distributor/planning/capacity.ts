export interface CapacityInput {
  /** The target's `x-max-length` queue argument, as listed (anything else than a non-negative integer is ignored). */
  maxLengthArgument: unknown;
  /** Per-target configuration, used when the queue has no `x-max-length`. */
  configuredMaxLength?: number;
  defaultMaxLength: number;
  /** The tuned length (the target's `tunedLength`), which replaces the others but never passes `x-max-length`. */
  tunedMaxLength?: number;
  /** Messages ready in the target now. */
  depth: number;
  /** Below this percentage of the max length free, the target is left alone this pass. */
  refillThresholdPercent: number;
}

export interface Capacity {
  maxLength: number;
  maxLengthFrom: 'queue-argument' | 'configuration' | 'default' | 'tuned';
  depth: number;
  /** max length − depth, floored at 0. */
  room: number;
  /** True when room is below the refill threshold: nothing moves this pass, to limit churn. */
  belowThreshold: boolean;
  /** What the planner may hand out: room, or 0 below the threshold. */
  capacity: number;
}

const isLength = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0;

/** A target's max length before tuning: its `x-max-length`, else the configured one, else the default. Pure. */
export function untunedMaxLength(
  input: Pick<CapacityInput, 'maxLengthArgument' | 'configuredMaxLength' | 'defaultMaxLength'>,
): number {
  if (isLength(input.maxLengthArgument)) return input.maxLengthArgument;
  return input.configuredMaxLength ?? input.defaultMaxLength;
}

/** How many messages a target can take this pass. Pure. */
export function targetCapacity(input: CapacityInput): Capacity {
  const argument = input.maxLengthArgument;
  const hasArgument = isLength(argument);
  // The queue's own limit stays a ceiling: filling past it would drop or refuse messages.
  const [maxLength, maxLengthFrom]: [number, Capacity['maxLengthFrom']] =
    input.tunedMaxLength !== undefined && !(hasArgument && argument < input.tunedMaxLength)
      ? [input.tunedMaxLength, 'tuned']
      : hasArgument
        ? [argument, 'queue-argument']
        : input.configuredMaxLength !== undefined
          ? [input.configuredMaxLength, 'configuration']
          : [input.defaultMaxLength, 'default'];
  const room = Math.max(0, maxLength - Math.max(0, input.depth));
  const belowThreshold = room * 100 < maxLength * input.refillThresholdPercent;
  return { maxLength, maxLengthFrom, depth: input.depth, room, belowThreshold, capacity: belowThreshold ? 0 : room };
}
