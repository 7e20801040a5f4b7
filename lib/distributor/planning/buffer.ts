/**
 * The target buffer (docs/distributor.md "Target buffer"): a target's ready depth is kept at what
 * its workers take before the next refill, its drain rate × a short horizon, never above its
 * effective max length; a message entering it waits about one horizon, whatever the queue type.
 */
export interface BufferSettings {
  /** How long the target's ready messages should last at its drain rate; 0: no buffer. */
  horizonMs: number;
}

/** A target with no drain measured yet starts this shallow: its first pass never fills it to its max length. */
export const START_DEPTH = 20;
/** The buffer never plans below this: a drain measured over a few ms can read 0 while workers are busy. */
export const MIN_DEPTH = 5;
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
