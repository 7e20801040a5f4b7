import { loadDistributorConfig } from '../../../lib/config/distributor';
import { distributorInvocation } from '../../../lib/distributor/service';
import { MAX_PASS_DELAY_MS, type PassRequestEvent } from '../../../lib/pass-requests/pass-trigger';

/** The invocation's wait before a requested pass, on jest's clock (the pass itself is not what is tested). */
describe('distributorInvocation: the wait a pass request asks for (issue 23 item 9)', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  const request = (delayMs: number): PassRequestEvent => ({
    source: 'fairway.pass-request',
    requestId: 'r1',
    target: 'worker-in',
    delayMs,
  });
  /** A 15-minute invocation (Lambda's longest): only the bound keeps a huge delay from holding it. */
  const setUp = () => {
    const runPass = jest.fn(async () => ({}) as never);
    const clamped: [number, number][] = [];
    const invocation = distributorInvocation(
      { runPass },
      { DISTRIBUTOR_SAFETY_MARGIN_MS: 10_000 },
      { requestDelayClamped: (requestedMs, maxMs) => clamped.push([requestedMs, maxMs]) },
    );
    const context = { getRemainingTimeInMillis: () => 900_000 };
    return { runPass, clamped, run: (event: PassRequestEvent) => invocation(event, context) };
  };

  it('waits a follow-up delay as asked', async () => {
    const { runPass, clamped, run } = setUp();
    const done = run(request(1_000));
    await jest.advanceTimersByTimeAsync(999);
    expect(runPass).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    await done;
    expect(runPass).toHaveBeenCalledTimes(1);
    expect(clamped).toEqual([]);
  });

  it('waits at most MAX_PASS_DELAY_MS for a larger delay, and reports that it clamped it', async () => {
    const { runPass, clamped, run } = setUp();
    const done = run(request(3_600_000));
    await jest.advanceTimersByTimeAsync(MAX_PASS_DELAY_MS);
    await done;
    expect(runPass).toHaveBeenCalledTimes(1);
    expect(clamped).toEqual([[3_600_000, MAX_PASS_DELAY_MS]]);
    expect(MAX_PASS_DELAY_MS).toBe(30_000);
  });

  it('no configured follow-up asks for more than the maximum', () => {
    const env = { DISTRIBUTOR_TABLE: 't', AMQP_URL: 'amqp://h', RABBITMQ_MANAGEMENT_URL: 'http://h' };
    const maxDelay = (ms: number) => () =>
      loadDistributorConfig({ ...env, DISTRIBUTOR_FOLLOW_UP_MAX_DELAY_MS: String(ms) });
    expect(maxDelay(MAX_PASS_DELAY_MS)).not.toThrow();
    expect(maxDelay(MAX_PASS_DELAY_MS + 1)).toThrow(/DISTRIBUTOR_FOLLOW_UP_MAX_DELAY_MS/);
  });

  it('refuses a delay that is not a whole number of ms from 0 to 2^53 − 1, naming the field', async () => {
    const { runPass, run } = setUp();
    for (const delayMs of [-1, 1.5, 2 ** 53, Number.POSITIVE_INFINITY]) {
      await expect(run(request(delayMs))).rejects.toThrow(/^delayMs: /);
    }
    expect(runPass).not.toHaveBeenCalled();
  });
});
