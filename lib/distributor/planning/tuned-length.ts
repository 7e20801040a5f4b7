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
