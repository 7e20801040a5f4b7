import { stagingWait } from '../../../local/stack/snapshot';

describe("stagingWait (the live view's added latency per tenant)", () => {
  it.each([
    ['nothing staged: nothing added', 0, 0, 0],
    ['nothing staged, nothing moving: still nothing added', 0, 5, 0],
    ['staged and moving: staged ÷ rate', 50, 10, 5],
    ['rounded to a tenth of a second', 10, 3, 3.3],
    ['staged and not moving: unknown (stalled)', 7, 0, undefined],
  ])('%s', (_name, staged, rate, expected) => {
    expect(stagingWait(staged, rate)).toBe(expected);
  });
});
