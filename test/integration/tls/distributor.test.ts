import { holdOwnNode } from '../../harness/own-node-holds';
import { type TlsBroker, tlsBroker } from './fixture';

holdOwnNode('shared');

// A distribution pass as Lambda runs it against Amazon MQ: listing over HTTPS, moving over AMQPS,
// the broker's CA given to Node by NODE_EXTRA_CA_CERTS.
describe('distributor pass over TLS (AMQPS, HTTPS management, CA from NODE_EXTRA_CA_CERTS)', () => {
  let broker: TlsBroker;
  beforeAll(async () => {
    broker = await tlsBroker();
    await broker.declare('worker-out', { 'x-max-priority': 10 });
    for (const tenant of ['t1', 't2']) {
      await broker.declare(`worker-out»/${tenant}`, { 'x-max-priority': 10 });
      await broker.publish(`worker-out»/${tenant}`, [`${tenant}-a`, `${tenant}-b`]);
    }
    await broker.listed(['worker-out»/t1', 'worker-out»/t2']);
  });
  afterAll(() => broker?.close());

  it('moves the staged messages of both tenants into the target', async () => {
    const run = await broker.run('distributor', {
      ...broker.env(),
      DISTRIBUTOR_TARGETS: JSON.stringify({ 'worker-out': { maxLength: 100 } }),
    });
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect((await broker.drain('worker-out')).sort()).toEqual(['t1-a', 't1-b', 't2-a', 't2-b']);
    expect(await broker.drain('worker-out»/t1')).toEqual([]);
    expect(await broker.drain('worker-out»/t2')).toEqual([]);
  });
});
