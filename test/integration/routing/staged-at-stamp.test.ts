import { type ChannelModel, connect } from 'amqplib';
import { waitReport } from '../../../lib/distributor/waits';
import { MAX_HEADER_TABLE_BYTES } from '../../../lib/routing/amqp-limits';
import type { AfterProcessEvent } from '../../../lib/routing/event';
import { testMove } from '../../harness/distributor-move-messages';
import { type RouterTestBed, sqsEvent, sqsRecord, startRouterTestBed } from '../../harness/routing-events';

/**
 * The staging-wait stamp from the router to the worker (issue 38, item 6): a sender's header of the
 * stamp's name is neither read as a wait nor lost, whatever the table's size.
 */
describe('the staged-at stamp, router to mover to worker (real RabbitMQ, dynalite)', () => {
  let bed: RouterTestBed;
  let mover: ChannelModel;
  beforeAll(async () => {
    bed = await startRouterTestBed({ queues: { 'worker-in': { durable: true, arguments: { 'x-max-priority': 10 } } } });
    mover = await connect(bed.rabbit.amqpUrl);
  });
  afterAll(async () => {
    await mover?.close();
    await bed?.close();
  });

  /** Routes one message of `tenant` with `headers`, moves its staging queue, and gives the worker's copy with the move. */
  type Headers = NonNullable<NonNullable<AfterProcessEvent['message']['properties']>['headers']>;
  const throughStaging = async (tenant: string, headers: Headers) => {
    const record: AfterProcessEvent = {
      target: 'worker-in',
      tenantId: tenant,
      message: { body: tenant, properties: { headers } },
    };
    expect(await bed.service.route(sqsEvent([sqsRecord(record)]))).toEqual({ batchItemFailures: [] });
    const source = `worker-in»/${tenant}`;
    const moved = await testMove(() => mover.createConfirmChannel(), { source, target: 'worker-in', count: 1 });
    const delivered = await bed.drain('worker-in');
    expect(delivered.map((m) => m.content.toString())).toEqual([tenant]);
    return { moved, headers: delivered[0]!.properties.headers };
  };

  it("a sender's own x-fairway-staged-at reaches the worker as sent; the router's stamp is measured", async () => {
    const sent = { 'x-fairway-staged-at': 'forged', keep: 'me' };
    const { moved, headers } = await throughStaging('forger', sent);
    expect(headers).toEqual(sent);
    expect(moved).toMatchObject({ moved: 1, wait: { measured: 1 } });
    expect(moved.wait!.maxMs).toBeLessThan(60_000);
  });

  it('a numeric one in a table too full for the stamp is no wait (no 57-year StagingWaitsOverBound), and is delivered', async () => {
    // 65,496 bytes of pad: the table fits AMQP's limit as sent, not with the router's stamp besides.
    const sent = { 'x-fairway-staged-at': 1, pad: 'a'.repeat(65_496) };
    const { moved, headers } = await throughStaging('padded', sent);
    expect(moved).toMatchObject({ moved: 1 });
    const queues = [{ name: 'worker-in»/padded', ...(moved.wait ? { wait: moved.wait } : {}) }];
    expect(waitReport([{ target: 'worker-in', queues }], 60_000).overBound).toEqual([]);
    expect(moved.wait).toBeUndefined();
    // Compared by keys and size: a diff of 65 kB of pad would drown the report.
    expect(Object.keys(headers ?? {})).toEqual(Object.keys(sent));
    expect(headers?.['x-fairway-staged-at']).toBe(1);
    expect(headers?.pad).toBe(sent.pad);
  });

  it('a table too full for the stamp without a header of its name is delivered as sent, its wait not measured', async () => {
    const sent = { pad: 'a'.repeat(MAX_HEADER_TABLE_BYTES - 40) };
    const { moved, headers } = await throughStaging('full', sent);
    expect(moved.wait).toBeUndefined();
    expect(headers?.pad === sent.pad && Object.keys(headers).length === 1).toBe(true);
  });

  it('a stamp-shaped table a sender writes is theirs: delivered as sent, not read as a wait', async () => {
    const sent = { 'x-fairway-staged-at': { at: 1, sent: 'x' }, other: null };
    const { moved, headers } = await throughStaging('shaped', sent);
    expect(headers).toEqual(sent);
    expect(moved.wait).toMatchObject({ measured: 1 });
    expect(moved.wait!.maxMs).toBeLessThan(60_000);
  });
});
