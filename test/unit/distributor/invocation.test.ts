import { loadDistributorConfig } from '../../../lib/distributor/config';
import { distributorInvocation } from '../../../lib/wiring/distributor';
import type { DistributorEvent } from '../../../lib/work-board/pass-trigger';
import { MAX_SLOTS } from '../../../lib/work-board/work-board';

describe('distributorInvocation: which event runs what', () => {
  const setUp = () => {
    const run = jest.fn(async () => ({}) as never);
    const invocation = distributorInvocation({ run });
    const context = { getRemainingTimeInMillis: () => 60_000 };
    return { run, invoke: (event: unknown) => invocation(event as DistributorEvent, context) };
  };

  it("the schedule's event runs the backstop (no event), a work event and an earlier pass request run as themselves", async () => {
    const { run, invoke } = setUp();
    await invoke({ source: 'aws.events', 'detail-type': 'Scheduled Event' });
    await invoke({ source: 'fairway.work' });
    const earlier = { source: 'fairway.pass-request', requestId: 'r1', target: 'worker-in', delayMs: 1_000 };
    await invoke(earlier);
    expect(run.mock.calls).toEqual([
      [undefined, 60_000],
      [{ source: 'fairway.work' }, 60_000],
      [earlier, 60_000],
    ]);
  });

  it('refuses a malformed event naming the field', async () => {
    const { run, invoke } = setUp();
    await expect(invoke({ source: 'fairway.work', target: 'x' })).rejects.toThrow(/Unrecognized key/);
    for (const delayMs of [-1, 1.5, Number.POSITIVE_INFINITY]) {
      await expect(invoke({ source: 'fairway.pass-request', requestId: 'r', target: 't', delayMs })).rejects.toThrow(
        /^delayMs: /,
      );
    }
    expect(run).not.toHaveBeenCalled();
  });

  it('the execution slots a router checks bound DISTRIBUTOR_MAX_EXECUTIONS', () => {
    const env = { DISTRIBUTOR_TABLE: 't', AMQP_URL: 'amqp://h', RABBITMQ_MANAGEMENT_URL: 'http://h' };
    const max = (n: number) => () => loadDistributorConfig({ ...env, DISTRIBUTOR_MAX_EXECUTIONS: String(n) });
    expect(max(MAX_SLOTS)).not.toThrow();
    expect(max(MAX_SLOTS + 1)).toThrow(/DISTRIBUTOR_MAX_EXECUTIONS/);
    expect(max(0)).toThrow(/DISTRIBUTOR_MAX_EXECUTIONS/);
    expect(loadDistributorConfig(env).DISTRIBUTOR_MAX_EXECUTIONS).toBe(2);
  });
});
