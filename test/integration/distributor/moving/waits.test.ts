import type { GetMessage } from 'amqplib';
import { DynamoWaitStore } from '../../../../lib/distributor/stores/wait-store';
import { ManagementClient } from '../../../../lib/rabbitmq/management';
import { STAGED_AT_HEADER, stampStagedAt } from '../../../../lib/staging/staging-names';
import { buildDistributor, warningReport } from '../../../../lib/wiring/distributor';
import { testMove } from '../../../harness/distributor-move-messages';
import { type DistributorFixture, distributorFixture, STATE_TABLE, scenario } from '../fixture';

/** Every property a worker may look at, as the router stages them (headers beside the stamp). */
const properties = {
  contentType: 'application/json',
  contentEncoding: 'utf-8',
  deliveryMode: 2,
  correlationId: 'corr-1',
  replyTo: 'replies',
  expiration: '600000',
  timestamp: 1_700_000_000,
  type: 'DocumentWorkerTask',
  appId: 'worker-x',
  priority: 4,
};
const headers = { 'x-caf-worker-retry': '2', nested: { a: 1 }, list: ['x', 'y'] };

describe('staging waits measured at move time (real RabbitMQ)', () => {
  let f: DistributorFixture;
  beforeAll(async () => {
    f = await distributorFixture();
  });
  afterAll(() => f?.close());

  const move = (request: Parameters<typeof testMove>[1]) => testMove(() => f.session.openConfirmChannel(), request);

  /** Stages one message per `agesMs`, stamped that long ago (undefined: routed before the stamp existed). */
  const stage = (queue: string, agesMs: (number | undefined)[]) =>
    f.withChannel(async (channel) => {
      const now = Date.now();
      agesMs.forEach((age, i) => {
        channel.publish('', queue, Buffer.from(`m-${i}`), {
          ...properties,
          messageId: `m-${i}`,
          headers: age === undefined ? headers : stampStagedAt(headers, now - age),
        });
      });
      await channel.waitForConfirms();
    });
  const getAll = (queue: string) =>
    f.withChannel(async (channel) => {
      const messages: GetMessage[] = [];
      for (let m = await channel.get(queue, { noAck: true }); m; m = await channel.get(queue, { noAck: true })) {
        messages.push(m);
      }
      return messages;
    });
  /** The moved copies carry every property and header as staged, less the stamp. */
  const expectUnchanged = (messages: GetMessage[], count: number) => {
    expect(messages).toHaveLength(count);
    for (const message of messages) {
      expect(message.properties).toMatchObject(properties);
      expect(message.properties.headers).toEqual(headers);
    }
  };

  it.each([
    ['a consumer (share above two)', 4],
    ['basic.get (share of two)', 2],
  ])('%s measures each moved message from its stamp and takes the stamp off', async (_name, count) => {
    const queue = `w${count}`;
    await f.declare(queue, { 'x-max-priority': 9 });
    await f.declare(`${queue}»/t1`);
    const ages = [40_000, 10_000, 20_000, 30_000].slice(0, count);
    await stage(`${queue}»/t1`, ages);
    const waitsMs: number[] = [];
    const result = await move({ source: `${queue}»/t1`, target: queue, count, waitsMs });
    expect(result).toMatchObject({ moved: count, stopReason: 'share-moved' });
    // Each wait is its age plus the time the test took to get it moved: well under a second here.
    const sorted = [...ages].sort((a, b) => a - b);
    expect(waitsMs).toHaveLength(count);
    [...waitsMs]
      .sort((a, b) => a - b)
      .forEach((wait, i) => {
        expect(wait).toBeGreaterThanOrEqual(sorted[i]!);
        expect(wait).toBeLessThan(sorted[i]! + 5_000);
      });
    expect(result.wait).toEqual({
      measured: count,
      p50Ms: [...waitsMs].sort((a, b) => a - b)[Math.ceil(count / 2) - 1],
      p99Ms: Math.max(...waitsMs),
      maxMs: Math.max(...waitsMs),
    });
    expectUnchanged(await getAll(queue), count);
  });

  it('a message routed before the stamp existed is moved as it is, its wait not measured', async () => {
    await f.declare('old');
    await f.declare('old»/t1');
    await stage('old»/t1', [undefined, 5_000, undefined]);
    const result = await move({ source: 'old»/t1', target: 'old', count: 3 });
    expect(result).toMatchObject({ moved: 3, wait: { measured: 1 } });
    expect(result.wait!.maxMs).toBeGreaterThanOrEqual(5_000);
    expectUnchanged(await getAll('old'), 3);

    await stage('old»/t1', [undefined]);
    expect(await move({ source: 'old»/t1', target: 'old', count: 1 })).toEqual({
      moved: 1,
      requeued: 0,
      parked: 0,
      stopReason: 'share-moved',
    });
  });

  it('a message put back in staging is not measured; it keeps its stamp for the move that takes it', async () => {
    await f.declare('tight', { 'x-max-length': 1, 'x-overflow': 'reject-publish' });
    await f.declare('tight»/t1');
    await stage('tight»/t1', [1_000, 1_000, 1_000]);
    const result = await move({ source: 'tight»/t1', target: 'tight', count: 3, prefetch: 1 });
    expect(result).toMatchObject({ moved: 1, stopReason: 'target-rejected', wait: { measured: 1 } });
    const left = await getAll('tight»/t1');
    expect(left).toHaveLength(2);
    for (const message of left) expect(message.properties.headers).toHaveProperty(STAGED_AT_HEADER);
  });

  scenario('a pass reports the wait per staging queue and per target', async (p) => {
    await p.declare('pw');
    await p.declare('pw»/a');
    await p.declare('pw»/b');
    const stamped = (queue: string, ageMs: number, n: number) =>
      p.withChannel(async (channel) => {
        for (let i = 0; i < n; i++) {
          const headers = stampStagedAt({}, Date.now() - ageMs);
          channel.publish('', queue, Buffer.from(`${queue}-${i}`), { messageId: `${queue}-${i}`, headers });
        }
        await channel.waitForConfirms();
      });
    await stamped('pw»/a', 30_000, 3);
    await stamped('pw»/b', 1_000, 1);
    await p.listed(['pw»/a', 'pw»/b']);
    const target = (await p.distributor().runPass(60_000)).targets[0]!;
    expect(target.moved).toBe(4);
    const waitOf = (name: string) => target.queues.find((q) => q.name === name)!.wait!;
    expect(waitOf('pw»/a').measured).toBe(3);
    expect(waitOf('pw»/b').measured).toBe(1);
    expect(target.wait!.measured).toBe(4);
    expect(target.wait!.maxMs).toBe(Math.max(waitOf('pw»/a').maxMs, waitOf('pw»/b').maxMs));
    expect(target.wait!.maxMs).toBeGreaterThanOrEqual(30_000);
    // Three of four waited ~30 s: the median is one of them.
    expect(target.wait!.p50Ms).toBeGreaterThanOrEqual(30_000);

    // Kept for `fairway tenants`, longest first.
    const kept = (await new DynamoWaitStore(p.dynamo.doc, STATE_TABLE).readAll()).find((t) => t.target === 'pw');
    expect(kept!.queues.map((q) => [q.queue, q.maxMs, q.measured])).toEqual([
      ['pw»/a', waitOf('pw»/a').maxMs, 3],
      ['pw»/b', waitOf('pw»/b').maxMs, 1],
    ]);
    // With who held the most in staging when the pass measured the target (issue 37, item 4).
    expect(kept!.backlog).toEqual([
      { tenant: 'a', staged: 3 },
      { tenant: 'b', staged: 1 },
    ]);
  });

  scenario('a wait record that cannot be written is a warning; the target is distributed all the same', async (p) => {
    await p.declare('pf');
    await p.declare('pf»/a');
    await p.withChannel(async (channel) => {
      channel.publish('', 'pf»/a', Buffer.from('x'), { headers: stampStagedAt({}, Date.now() - 1_000) });
      await channel.waitForConfirms();
    });
    await p.listed(['pf»/a']);
    // DynamoDB refuses the wait record alone; leases and rotations go through.
    const send = p.dynamo.doc.send.bind(p.dynamo.doc);
    const doc = Object.create(p.dynamo.doc) as typeof p.dynamo.doc;
    doc.send = ((command: { input?: { Item?: { pk?: string } } }) =>
      String(command.input?.Item?.pk).startsWith('staging-waits#')
        ? Promise.reject(new Error('ProvisionedThroughputExceededException'))
        : send(command as never)) as typeof doc.send;
    const management = new ManagementClient(p.rabbit.managementUrl, p.rabbit.vhost);
    const warnings: string[] = [];
    const distributor = buildDistributor(
      p.config(),
      {
        openChannel: () => p.session.openConfirmChannel(),
        listQueues: () => management.listQueues(),
        listPolicies: () => management.listPolicies(),
        getQueue: (name) => management.getQueue(name),
        doc,
        consumptionRate: async () => undefined,
      },
      warningReport((message, details) => warnings.push(`${message} ${JSON.stringify(details)}`)),
    );
    const target = (await distributor.runPass(60_000)).targets[0]!;
    expect(target).toMatchObject({ outcome: 'distributed', moved: 1, wait: { measured: 1 } });
    expect(warnings).toEqual([expect.stringMatching(/staging waits for the CLI.*"target":"pf".*Throughput/)]);
    expect(await p.depth('pf')).toBe(1);
  });
});
