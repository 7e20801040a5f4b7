import type { DistributorSettings } from './config';
import { bufferDepth, type Drain, nextDrain, tuneLength, untunedMaxLength } from './planning/capacity';
import { type TargetMeasurement, targetLimits } from './planning/target-plan';
import type { DistributorReport } from './report';
import type { TunedLengthStore } from './stores/rotation-store';

/** Where tuned targets' rates come from and their lengths are kept. */
export interface TuningDeps {
  /** Messages per second the target's consumers took over the last `windowSeconds` (management API). */
  rate(target: string, windowSeconds: number): Promise<number | undefined>;
  lengths: TunedLengthStore;
}

export type Kept = NonNullable<TargetMeasurement['kept']>;

/**
 * The length a pass keeps each target at: its buffer (bufferDepth in planning/capacity.ts) from the drain this
 * container measures over AMQP, or for a target with `tunedLength` the tuned length (which then
 * replaces the buffer); none for a target whose buffer is turned off.
 */
export function keptLengths(
  settings: DistributorSettings,
  tuning: TuningDeps,
  report: Pick<DistributorReport, 'lengthTuned'>,
  now: () => number,
) {
  const drains = new Map<string, Drain>();

  /** Whether the target has a buffer: it is refilled at its drain's pace while busy. */
  const buffered = (target: string): boolean => {
    const configured = settings.targets[target];
    return settings.buffer.horizonMs > 0 && configured?.buffer !== false && configured?.tunedLength === undefined;
  };

  /** The buffer from the depth read now; `moved(…)` records what the pass then put in. */
  function buffer(measured: TargetMeasurement, at: number): Kept {
    const depth = measured.depth ?? 0;
    const last = drains.get(measured.target);
    const perSecond = nextDrain(last, depth, at);
    drains.set(measured.target, { ...(perSecond === undefined ? {} : { perSecond }), left: depth, at });
    return { length: bufferDepth(perSecond, untuned(settings, measured), settings.buffer), from: 'buffer' };
  }

  return {
    buffered,
    /** The length to keep the target at this pass (undefined: its untuned max length). */
    async of(measured: TargetMeasurement): Promise<Kept | undefined> {
      if (measured.depth === undefined) return undefined;
      if (buffered(measured.target)) return buffer(measured, now());
      return tuned({ settings, tuning, report, now }, measured);
    },
    /** Messages the pass put in the target after reading its depth: the next drain reading counts from there. */
    moved(target: string, count: number): void {
      const last = drains.get(target);
      if (last && count > 0) drains.set(target, { ...last, left: last.left + count });
    },
  };
}

/** What tuning a length needs. */
interface TuningContext {
  settings: DistributorSettings;
  tuning: TuningDeps;
  report: Pick<DistributorReport, 'lengthTuned'>;
  now: () => number;
}

/**
 * The tuned length of a target that has `tunedLength` (and exists): a step from the last pass's
 * length toward rate × goal, stored for the next pass. In noop mode only reported.
 */
async function tuned(
  { settings, tuning, report, now }: TuningContext,
  measured: TargetMeasurement,
): Promise<Kept | undefined> {
  const tunedSettings = settings.targets[measured.target]?.tunedLength;
  if (!tunedSettings || measured.depth === undefined) return undefined;
  const [rate, stored] = await Promise.all([
    tuning.rate(measured.target, tunedSettings.rateWindowSeconds),
    tunedSettings.mode === 'apply' ? tuning.lengths.read(measured.target) : undefined,
  ]);
  const previous = stored ?? untuned(settings, measured);
  const { goal, next } = tuneLength(tunedSettings, { rate, previous });
  report.lengthTuned({
    target: measured.target,
    mode: tunedSettings.mode,
    ...(rate === undefined ? {} : { rate }),
    ...(goal === undefined ? {} : { goal }),
    previous,
    next,
  });
  if (tunedSettings.mode === 'noop') return undefined;
  if (next !== stored) await tuning.lengths.write(measured.target, next, now());
  return { length: next, from: 'tuned' };
}

/** The target's length without a buffer or tuning: its limit, else the configured, else the default. */
function untuned(settings: DistributorSettings, measured: TargetMeasurement): number {
  return untunedMaxLength({
    queueMaxLength: targetLimits(measured).maxLength,
    configuredMaxLength: settings.targets[measured.target]?.maxLength,
    defaultMaxLength: settings.defaultMaxLength,
  });
}
