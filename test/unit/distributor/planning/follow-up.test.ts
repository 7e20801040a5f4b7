import { followUpDelay, type TargetEnd } from '../../../../lib/distributor/planning/follow-up';

const settings = { followUpDelayMs: 1_000, followUpMaxDelayMs: 20_000 };
const end = (over: Partial<TargetEnd>): TargetEnd => ({
  outcome: 'distributed',
  staged: 0,
  moved: 0,
  wanted: false,
  ...over,
});

describe('followUpDelay', () => {
  it.each<[string, Partial<TargetEnd>, number | undefined]>([
    ['staging emptied: the schedule is enough', { staged: 5, moved: 5 }, undefined],
    ['staging emptied, a request came meanwhile: at once', { staged: 5, moved: 5, wanted: true }, 0],
    ['work left after moving: the base delay', { staged: 900, moved: 100 }, 1_000],
    ['target full, first time: the base delay', { outcome: 'below-threshold', staged: 900 }, 1_000],
    ['target full again: twice the last', { outcome: 'below-threshold', staged: 900, previousDelayMs: 4_000 }, 8_000],
    ['target full for long: the maximum', { outcome: 'below-threshold', staged: 9, previousDelayMs: 16_000 }, 20_000],
    [
      'target full, a request came meanwhile: the base delay',
      { outcome: 'below-threshold', staged: 9, wanted: true, previousDelayMs: 8_000 },
      1_000,
    ],
    ['the target failed: backing off', { outcome: 'failed', previousDelayMs: 2_000 }, 4_000],
    ['the target failed before measuring: still a next pass', { outcome: 'failed' }, 1_000],
    ['leased elsewhere: the holder asks', { outcome: 'leased-elsewhere', staged: 9 }, undefined],
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
