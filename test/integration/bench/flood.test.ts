import { type ChannelModel, connect } from 'amqplib';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { floodBench, runFlood } from '../../../bench/flood';
import { tinyFlags } from '../../../bench/lib/benchmark';
import { account } from '../../../bench/lib/flood-metrics';
import { DepthReader, drainIds, SqsBatches, sleep } from '../../../bench/lib/flood-traffic';
import { createTestVhost, type TestVhost } from '../../harness/rabbit';

/**
 * The flood bench's parts that decide its "nothing lost" and latency figures, against the real
 * broker: what the accounting finds must be what happened.
 */
describe('flood bench parts', () => {
  let rabbit: TestVhost;
  let model: ChannelModel;

  beforeAll(async () => {
    rabbit = await createTestVhost();
    model = await connect(rabbit.amqpUrl);
  });

  afterAll(async () => {
    await model.close();
    await rabbit.delete();
  });

  it('counts the messages a drop-head target dropped as lost, and what waits as waiting', async () => {
    const channel = await model.createConfirmChannel();
    await channel.assertQueue('dropping', { arguments: { 'x-max-length': 5 } });
    const sent = Array.from({ length: 10 }, (_, i) => `t#${i}`);
    for (const id of sent) channel.sendToQueue('dropping', Buffer.from('{}'), { messageId: id });
    await channel.waitForConfirms();
    await channel.close();
    const queued = await drainIds(model, ['dropping', 'never-declared']);
    expect(queued).toEqual(['t#5', 't#6', 't#7', 't#8', 't#9']);
    expect(account(sent, [], queued)).toMatchObject({ sent: 10, delivered: 0, waiting: 5, lost: 5, duplicates: 0 });
    await expect(new DepthReader(model).depth('dropping')).resolves.toBe(0); // deleted, read as empty
  });

  it('hands the router batches of at most batchSize, in order, and sends the records it fails again', async () => {
    const batches: string[][] = [];
    let failedOnce = false;
    const route = async (event: SQSEvent): Promise<SQSBatchResponse> => {
      batches.push(event.Records.map((r) => r.body));
      const second = event.Records.find((r) => r.body === 'b');
      if (second && !failedOnce) {
        failedOnce = true;
        return { batchItemFailures: [{ itemIdentifier: second.messageId }] };
      }
      return { batchItemFailures: [] };
    };
    const sqs = new SqsBatches(route, { batchSize: 2, windowMs: 0, concurrency: 1 }, () => undefined);
    for (const id of ['a', 'b', 'c']) sqs.send(id, id);
    sqs.start();
    while (batches.flat().length < 4) await sleep(5);
    const firstHanded = sqs.handedAt.get('b');
    await sqs.stop();
    expect(batches).toEqual([
      ['a', 'b'],
      ['c', 'b'],
    ]);
    expect(sqs.retried).toBe(1);
    expect(sqs.handedAt.get('b')).toBe(firstHanded); // latency counts from the first hand-over
    expect(sqs.waiting()).toEqual([]);
  });

  it('as a fair queue, takes each batch from the message groups in turn, each group in order', async () => {
    const batches: string[][] = [];
    const route = async (event: SQSEvent): Promise<SQSBatchResponse> => {
      batches.push(event.Records.map((r) => JSON.parse(r.body).message.body));
      return { batchItemFailures: [] };
    };
    const event = (tenantId: string, body: string) => JSON.stringify({ target: 't', tenantId, message: { body } });
    const sqs = new SqsBatches(route, { batchSize: 3, windowMs: 0, concurrency: 1, ingress: 'fair' }, () => undefined);
    for (const n of [1, 2, 3, 4]) sqs.send(`noisy#${n}`, event('noisy', `n${n}`));
    sqs.send('quiet#1', event('quiet', 'q1'));
    sqs.send('other#1', event('other', 'o1'));
    sqs.start();
    while (batches.flat().length < 6) await sleep(5);
    await sqs.stop();
    // FIFO would hand n1 n2 n3 first: the quiet tenants would wait behind the flood.
    expect(batches).toEqual([
      ['n1', 'q1', 'o1'],
      ['n2', 'n3', 'n4'],
    ]);
  });

  it('refuses a misspelled distributor setting before any run', async () => {
    const progress: string[] = [];
    await expect(
      runFlood(
        tinyFlags(floodBench),
        {
          distributorEnv: { DISTRIBUTOR_SAFETY_MARGIN: '1' },
          routerEnv: {},
          scenarios: ['flood'],
          deliveries: ['fifo'],
          targetTypes: ['classic-priority'],
          ingress: ['fifo'],
        },
        (line) => progress.push(line),
      ),
    ).rejects.toThrow(/DISTRIBUTOR_SAFETY_MARGIN: is not a variable Fairway reads/);
    expect(progress).toEqual([]);
  });

  it('runs the Fairway delivery with tiny sizes and loses nothing', async () => {
    expect(floodBench.textFlags).toHaveProperty('distributor-env');
    const tables = await runFlood(
      tinyFlags(floodBench),
      {
        distributorEnv: {},
        routerEnv: {},
        scenarios: ['five-noisy'],
        deliveries: ['on-demand'],
        targetTypes: ['quorum'],
        ingress: ['fair'],
      },
      () => undefined,
    );
    const runs = tables.find((t) => t.title === 'Flood: every run')!.rows;
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ scenario: 'five-noisy', target: 'quorum', ingress: 'fair', lost: 0 });
    expect(runs[0]!['quiet ingress wait p99']).toMatch(/^(≥ )?\d+\.\d{3} s$/);
    expect(runs[0]!.sent).toBeGreaterThan(60); // 2 noisy tenants × 30, and the quiet tenants'
  }, 120_000);
});
