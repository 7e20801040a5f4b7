import { type TunedLengthSettings, tuneLength } from '../../../../lib/distributor/planning/capacity';
import { controlledWeight, queueControl, someQueueMayWeighZero } from '../../../../lib/distributor/planning/weights';

const settings: TunedLengthSettings = {
  goalSeconds: 10,
  minLength: 100,
  maxLength: 2000,
  maxStepPercent: 25,
  roundTo: 10,
};

describe('tuneLength (upstream tuned target queue length)', () => {
  it.each<[string, number | undefined, number, { goal?: number; next: number }]>([
    ['50/s × 10 s from 1000: a 25 % step down toward 500', 50, 1000, { goal: 500, next: 750 }],
    ['close enough: lands on the goal', 50, 560, { goal: 500, next: 500 }],
    ['at the goal: stays', 50, 500, { goal: 500, next: 500 }],
    ['a fast consumer: goal clamped to the maximum', 1000, 1900, { goal: 2000, next: 2000 }],
    ['no consumption: goal clamped to the minimum', 0, 120, { goal: 100, next: 100 }],
    ['rounded to roundTo', 50.4, 500, { goal: 500, next: 500 }],
    ['no rate yet: keeps the previous length', undefined, 800, { next: 800 }],
    ['a previous length outside the clamps is brought inside', undefined, 5000, { next: 2000 }],
    ['the step is at least one roundTo', 50, 100 + 0, { goal: 500, next: 125 }],
  ])('%s', (_, rate, previous, expected) => {
    expect(tuneLength(settings, { rate, previous })).toEqual(expected);
  });

  it('converges within ±20 % of rate × goal in a few passes and never leaves the clamps', () => {
    let length = 1000;
    const seen: number[] = [];
    for (const rate of [53, 46, 52, 49, 54, 47]) {
      length = tuneLength(settings, { rate, previous: length }).next;
      seen.push(length);
    }
    expect(seen.every((l) => l >= 100 && l <= 2000)).toBe(true);
    for (const l of seen.slice(2)) expect(Math.abs(l - 500)).toBeLessThanOrEqual(100);
  });
});

describe('tenant controls on staging queues', () => {
  const controls = { t1: { paused: true }, t2: { weight: 4 }, 't2/w': { weight: 0.5 }, 't3/w': { paused: true } };
  const weight = controlledWeight(() => 7, controls);

  it.each([
    ['q»/t1/w', 0, true],
    ['q»/t1', 0, true],
    ['q»/t2/other', 4, false],
    ['q»/t2/w', 0.5, false],
    ['q»/t3/w', 0, true],
    ['q»/t3/x', 7, false],
    ['q»/t4', 7, false],
    ['q', 7, false],
  ])('%s plans with weight %d (paused %s)', (name, expected, paused) => {
    expect(weight(name)).toBe(expected);
    expect(queueControl(controls, name).paused).toBe(paused);
  });
});

describe('someQueueMayWeighZero: fail closed for queues no pass has seen yet', () => {
  const positive = [{ regex: 'tenant2', weight: 3 }];
  it.each<[string, Parameters<typeof someQueueMayWeighZero>[0], Parameters<typeof someQueueMayWeighZero>[1], boolean]>([
    ['no rules, no controls', [], {}, false],
    ['positive rules and weights', positive, { t1: { weight: 2 }, 't1/w': { weight: 0.001 } }, false],
    ['a control resumed (no pause, no weight)', [], { t1: {} }, false],
    ['a paused tenant', [], { t1: { paused: true } }, true],
    ['a paused workflow', positive, { 't1/w': { paused: true } }, true],
    ['a tenant weighed 0 at run time', [], { t1: { weight: 0 } }, true],
    ['a configured rule of weight 0', [...positive, { pattern: 'scan»/tenant1/*', weight: 0 }], {}, true],
    // An own key, as the store builds it (a literal's __proto__ would set the prototype).
    ['a tenant called __proto__, paused', [], JSON.parse('{"__proto__":{"paused":true}}'), true],
  ])('%s', (_, rules, controls, may) => {
    expect(someQueueMayWeighZero(rules, controls)).toBe(may);
  });
});
