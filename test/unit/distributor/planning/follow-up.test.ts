import { followUpDelay, type TargetEnd } from '../../../../lib/distributor/planning/budget';

const settings = { followUpDelayMs: 1_000, followUpMaxDelayMs: 20_000, refillThresholdPercent: 10 };
const end = (over: Partial<TargetEnd>): TargetEnd => ({ outcome: 'distributed', staged: 0, moved: 0, ...over });

describe('followUpDelay: when a target is due again', () => {
  it.each<[string, Partial<TargetEnd>, number | undefined]>([
    ['staging emptied: no due time', { staged: 5, moved: 5 }, undefined],
    ['staging emptied, one message parked: no due time', { staged: 5, moved: 4, parked: 1 }, undefined],
    ['work left, drain not known yet: the base delay', { staged: 900, moved: 100 }, 1_000],
    // 1,000 max, threshold 10 %: refill once depth falls to 900. Left at 1,000, draining 0.2/ms: 500 ms.
    [
      'filled to the top, 200 msg/s: when room passes the threshold',
      { staged: 900, moved: 100, depth: 900, maxLength: 1_000, drainPerMs: 0.2 },
      500,
    ],
    ['left at 950, 20 msg/s: 2.5 s', { staged: 900, moved: 50, depth: 900, maxLength: 1_000, drainPerMs: 0.02 }, 2_500],
    [
      'left below the threshold (deadline): at once',
      { staged: 900, moved: 10, depth: 500, maxLength: 1_000, drainPerMs: 0.2 },
      0,
    ],
    [
      'full and draining slowly: never past the maximum',
      { outcome: 'below-threshold', staged: 9, depth: 1_000, maxLength: 1_000, drainPerMs: 0.001 },
      20_000,
    ],
    [
      'room but nothing moved (the target refused it): backing off, not at once',
      { staged: 900, moved: 0, depth: 100, maxLength: 1_000, drainPerMs: 0.2, previousDelayMs: 1_000 },
      2_000,
    ],
    ['target full, not draining, first time: the base delay', { outcome: 'below-threshold', staged: 900 }, 1_000],
    [
      'target full, not draining, again: twice the last',
      { outcome: 'below-threshold', staged: 900, previousDelayMs: 4_000 },
      8_000,
    ],
    ['target full for long: the maximum', { outcome: 'below-threshold', staged: 9, previousDelayMs: 16_000 }, 20_000],
    [
      'the target failed: backing off, whatever its drain',
      { outcome: 'failed', previousDelayMs: 2_000, drainPerMs: 1 },
      4_000,
    ],
    ['the target failed before measuring: still a next pass', { outcome: 'failed' }, 1_000],
    ['leased elsewhere: its holder schedules it', { outcome: 'leased-elsewhere', staged: 9 }, undefined],
    ['missing target: left to the schedule', { outcome: 'target-missing', staged: 9 }, undefined],
  ])('%s', (_name, over, expected) => {
    expect(followUpDelay(end(over), settings)).toBe(expected);
  });

  it('with a base delay of 0 a full target still backs off', () => {
    const zero = { ...settings, followUpDelayMs: 0 };
    expect(followUpDelay(end({ outcome: 'below-threshold', staged: 9, previousDelayMs: 0 }), zero)).toBe(1);
    expect(followUpDelay(end({ outcome: 'below-threshold', staged: 9, previousDelayMs: 1 }), zero)).toBe(2);
  });
});
