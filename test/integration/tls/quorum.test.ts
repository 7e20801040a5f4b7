import { holdOwnNode } from '../../harness/own-node-holds';
import { afterProcessEvent, type TlsBroker, tlsBroker } from './fixture';

holdOwnNode('shared');

interface QueueListing {
  name: string;
  type: string;
  arguments: Record<string, unknown>;
}

// Amazon MQ's 4.x brokers make quorum queues by default. End to end over TLS on RabbitMQ 3.10,
// which has them: the router stages into classic staging queues (reapable, a third of the memory;
// docs/router.md "Staging queues"), and a distribution pass moves every message into the quorum target.
describe('quorum target, router → classic staging queues → distributor pass → target, over TLS', () => {
  let broker: TlsBroker;
  const listing = async () =>
    broker.rabbit.api<QueueListing[]>(
      'GET',
      `/api/queues/${encodeURIComponent(broker.rabbit.vhost)}?columns=name,type,arguments`,
    );
  beforeAll(async () => {
    broker = await tlsBroker();
    await broker.declare('quorum-worker', { 'x-queue-type': 'quorum', 'x-delivery-limit': 5 });
  });
  afterAll(() => broker?.close());

  it('stages in classic queues, then moves every message into the quorum target', async () => {
    const routed = await broker.run('router', broker.env(), [
      afterProcessEvent([
        ['quorum-worker', 't1', 'a1'],
        ['quorum-worker', 't1', 'a2'],
        ['quorum-worker', 't2', 'b1'],
      ]),
    ]);
    expect(routed).toMatchObject({ code: 0, stderr: '', results: [{ batchItemFailures: [] }] });
    const staging = (await listing()).filter((queue) => queue.name.startsWith('quorum-worker»/'));
    expect(
      staging
        .map(({ name, type, arguments: args }) => ({ name, type, args }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    ).toEqual([
      // The delivery limit stays on the target: a staging queue never drops a waiting message.
      {
        name: 'quorum-worker»/t1',
        type: 'classic',
        args: { 'x-overflow': 'reject-publish', 'x-queue-type': 'classic' },
      },
      {
        name: 'quorum-worker»/t2',
        type: 'classic',
        args: { 'x-overflow': 'reject-publish', 'x-queue-type': 'classic' },
      },
    ]);

    await broker.listed(['quorum-worker»/t1', 'quorum-worker»/t2']);
    const pass = await broker.run('distributor', broker.env());
    expect(pass).toMatchObject({ code: 0, stderr: '', results: [expect.objectContaining({ moved: 3 })] });
    expect((await broker.drain('quorum-worker')).sort()).toEqual(['a1', 'a2', 'b1']);
    expect(await broker.drain('quorum-worker»/t1')).toEqual([]);
    expect(await broker.drain('quorum-worker»/t2')).toEqual([]);
  });
});
