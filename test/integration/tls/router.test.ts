import { holdOwnNode } from '../../harness/own-node-holds';
import { afterProcessEvent, type TlsBroker, tlsBroker } from './fixture';

holdOwnNode('shared');

// The router as Lambda runs it against Amazon MQ: AMQPS and HTTPS management only, the broker's CA
// given to Node by NODE_EXTRA_CA_CERTS, certificates verified (amqplib and fetch never skip it).
describe('router over TLS (AMQPS, HTTPS management, CA from NODE_EXTRA_CA_CERTS)', () => {
  let broker: TlsBroker;
  beforeAll(async () => {
    broker = await tlsBroker();
    await broker.declare('worker-in', { 'x-max-priority': 10 });
  });
  afterAll(() => broker?.close());

  it('stages each tenant’s message in its staging queue, shaped from the target read over HTTPS', async () => {
    const run = await broker.run('router', broker.env(), [
      afterProcessEvent([
        ['worker-in', 't1', 'one'],
        ['worker-in', 't2', 'two'],
      ]),
    ]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.results).toEqual([{ batchItemFailures: [] }]);
    expect(await broker.drain('worker-in»/t1')).toEqual(['one']);
    expect(await broker.drain('worker-in»/t2')).toEqual(['two']);
    const staging = await broker.rabbit.api<{ arguments: Record<string, unknown> }>(
      'GET',
      `/api/queues/${encodeURIComponent(broker.rabbit.vhost)}/${encodeURIComponent('worker-in»/t1')}`,
    );
    // The target lists no x-queue-type: its staging queue is classic by name (and leaves
    // x-max-priority out, ROUTER_STAGING_PRIORITIES=none).
    expect(staging.arguments).toEqual({
      'x-queue-type': 'classic',
      'x-overflow': 'reject-publish',
    });
  });
});
