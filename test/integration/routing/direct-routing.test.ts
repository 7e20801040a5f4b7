import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { type ChannelModel, connect } from 'amqplib';
import { loadDistributorConfig } from '../../../lib/distributor/config';
import type { ExecutionSummary } from '../../../lib/distributor/report';
import { DynamoTenantControlStore, TENANT_CONTROLS_KEY } from '../../../lib/distributor/stores/tenant-control-store';
import { createDistributorService, warningReport } from '../../../lib/wiring/distributor';
import { createRouterService } from '../../../lib/wiring/router';
import { parseDistributorEvent } from '../../../lib/work-board/pass-trigger';
import { DynamoWorkBoard } from '../../../lib/work-board/work-board-store';
import { startLambdaInvokeServer } from '../../../local/lambda-invoke-server';
import { startDynamo } from '../../harness/dynamo';
import { eventually } from '../../harness/eventually';
import { createTestVhost } from '../../harness/rabbit';
import { event, recordingReport, routerConfig, sqsEvent, sqsRecord } from '../../harness/routing-events';

const TABLE = 'DistributorStateTable';
// Wide enough for a loaded machine: at 200 ms a router's board read was often stale by the time it
// published (everything staged), and a confirm could take over 300 ms.
const READ_MS = 2_000;
const PUBLISH_MS = 2_000;
const MAX_DEPTH = 5;
const CONTROLS_UNREADABLE =
  'Could not read the tenant controls; distributed with the last ones read, and granted no target';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const direct = { DIRECT_ROUTING: 'granted' };
/** The fixed windows shortened for the test (both functions get the same). */
const windows = { maxDepth: MAX_DEPTH, readMs: READ_MS, publishMs: PUBLISH_MS, grantMs: 60_000 };

/** dynalite, a vhost, a connection for the test's own reads, and the Lambda endpoint routers start executions through. */
async function bed(runExecutions: boolean, distributorEnv: Record<string, string> = {}) {
  const [dynamo, rabbit] = await Promise.all([startDynamo(), createTestVhost()]);
  await dynamo.createTables();
  const model = await connect(rabbit.amqpUrl);
  const channel = await model.createChannel();
  const warnings: string[] = [];
  const executions: ExecutionSummary[] = [];
  const distributor = runExecutions
    ? createDistributorService(
        loadDistributorConfig(
          {
            AMQP_URL: rabbit.amqpUrl,
            RABBITMQ_MANAGEMENT_URL: rabbit.managementUrl,
            RABBITMQ_VHOST: rabbit.vhost,
            DISTRIBUTOR_TABLE: TABLE,
            DYNAMODB_ENDPOINT: dynamo.endpoint,
            // The grants' cycle is counted against the target's max length, not its buffer.
            DISTRIBUTOR_BUFFER_HORIZON_MS: '0',
            ...direct,
            ...distributorEnv,
          },
          { followUpDelayMs: 50, followUpMaxDelayMs: 400, idleStopMs: 200, boardPollMs: 50, direct: windows },
        ),
        warningReport((message) => warnings.push(message)),
      )
    : undefined;
  const lambda = await startLambdaInvokeServer(async (_name, e) => {
    if (distributor) executions.push(await distributor.run(parseDistributorEvent(e), 60_000));
  });
  const recorded = recordingReport();
  /** A router container of its own (its own connection and grant cache), as Lambda runs them side by side. */
  const newRouter = () =>
    createRouterService(
      routerConfig(
        rabbit,
        dynamo,
        {
          DISTRIBUTOR_FUNCTION_NAME: 'fairway-test-distributor',
          DISTRIBUTOR_TABLE: TABLE,
          LAMBDA_ENDPOINT: lambda.endpoint,
          ...direct,
        },
        { direct: windows },
      ),
      recorded.report,
    );
  const router = newRouter();
  const board = new DynamoWorkBoard(dynamo.doc, TABLE);
  return {
    dynamo,
    rabbit,
    model,
    board,
    lambda,
    recorded,
    executions,
    warnings,
    newRouter,
    route: (target: string, tenants: readonly string[], prefix: string, by = router) =>
      by.route(sqsEvent(tenants.map((tenant, i) => sqsRecord(event(target, tenant, `${prefix}-${i}`))))),
    declare: (queue: string, args: Record<string, unknown> = {}) =>
      channel.assertQueue(queue, { durable: true, arguments: args }),
    depth: async (queue: string) => (await channel.checkQueue(queue)).messageCount,
    /** The bodies the queue holds now, taken off it. */
    async drain(queue: string): Promise<string[]> {
      const bodies: string[] = [];
      for (let m = await channel.get(queue, { noAck: true }); m; m = await channel.get(queue, { noAck: true }))
        bodies.push(m.content.toString());
      return bodies;
    },
    async exists(queue: string) {
      const probe = await model.createChannel();
      probe.on('error', () => undefined);
      return probe.checkQueue(queue).then(
        () => probe.close().then(() => true),
        () => false,
      );
    },
    async close() {
      await router.close();
      await lambda.close();
      await distributor?.close();
      await (model as ChannelModel).close().catch(() => undefined);
      await Promise.all([dynamo.stop(), rabbit.delete()]);
    },
  };
}

describe('direct routing under a grant: the router (real RabbitMQ, dynalite)', () => {
  let b: Awaited<ReturnType<typeof bed>>;
  beforeAll(async () => {
    b = await bed(false);
  });
  afterAll(() => b?.close());

  const grant = (target: string, until = Date.now() + 60_000) =>
    b.board.writeServed([{ target, served: 0, grant: until }]);

  it('(a) no grant: staged, and a pass asked for', async () => {
    await b.declare('ungranted');
    expect(await b.route('ungranted', ['a', 'b'], 'u')).toEqual({ batchItemFailures: [] });
    expect(await b.depth('ungranted')).toBe(0);
    expect(await b.depth('ungranted»/a')).toBe(1);
    expect((await b.board.read()).targets.get('ungranted')?.req).toBeGreaterThan(0);
    expect(b.recorded.counts.RoutedDirect).toBe(0);
  });

  it('(b) a live grant and an idle target: in the target directly, nothing staged, no pass asked for', async () => {
    await b.declare('idle');
    await grant('idle');
    const before = await b.board.read();
    expect(await b.route('idle', ['a', 'b', 'a'], 'i')).toEqual({ batchItemFailures: [] });
    const messages = await b.drain('idle');
    expect(messages.sort()).toEqual(['i-0', 'i-1', 'i-2']);
    expect(await b.exists('idle»/a')).toBe(false);
    const after = await b.board.read();
    expect(after.version).toBe(before.version);
    expect(after.targets.get('idle')?.req).toBeUndefined();
    expect(b.recorded.counts.RoutedDirect).toBe(3);
  });

  it('(c) a granted target already at the max depth: staged, and a pass asked for', async () => {
    await b.declare('full');
    await b.route('full', ['seed'], 'warm'); // staged: no grant yet
    await b.drain('full»/seed');
    await grant('full');
    await sleep(READ_MS + 20); // the router's cached "no grant" lapses
    const fill = await b.model.createConfirmChannel();
    for (let i = 0; i < MAX_DEPTH; i++) fill.sendToQueue('full', Buffer.from(`pre-${i}`));
    await fill.waitForConfirms();
    await fill.close();
    const directBefore = b.recorded.counts.RoutedDirect ?? 0;
    expect(await b.route('full', ['a'], 'f')).toEqual({ batchItemFailures: [] });
    expect(await b.depth('full')).toBe(MAX_DEPTH);
    expect(await b.depth('full»/a')).toBe(1);
    expect((await b.board.read()).targets.get('full')?.req).toBeGreaterThan(1);
    expect(b.recorded.counts.RoutedDirect).toBe(directBefore);
  });

  it('a lapsing grant (not outlasting the read and publish windows) is not used', async () => {
    await b.declare('lapsing');
    await grant('lapsing', Date.now() + READ_MS + PUBLISH_MS - 50);
    await b.route('lapsing', ['a'], 'l');
    expect(await b.depth('lapsing')).toBe(0);
    expect(await b.depth('lapsing»/a')).toBe(1);
  });
});

describe('direct routing under a grant: a full cycle with the distributor (real RabbitMQ, dynalite)', () => {
  let b: Awaited<ReturnType<typeof bed>>;
  const capacity = 10;
  beforeAll(async () => {
    b = await bed(true, { DISTRIBUTOR_DEFAULT_MAX_LENGTH: String(capacity) });
  });
  afterAll(() => b?.close());

  it('(d) staged first, granted, direct next; a burst past the max depth is staged, revoked, waited out and moved; never past capacity, each message once', async () => {
    const target = 'cycle';
    await b.declare(target);
    const arrived: string[] = [];

    // A first batch: no grant yet, staged; the execution moves it and grants the target.
    await b.route(target, ['a', 'b', 'c'], 'one');
    await b.lambda.idle();
    expect(b.executions).toHaveLength(1);
    expect(b.executions[0]).toMatchObject({ moved: 3, grants: 1, revocations: 0 });
    expect((await b.board.read()).targets.get(target)?.grant).toBeGreaterThan(Date.now() + 50_000);
    arrived.push(...(await b.drain(target)));

    // The next batch goes direct: no execution, no request.
    await sleep(READ_MS + 20);
    const version = (await b.board.read()).version;
    await b.route(target, ['a', 'b', 'c'], 'two');
    expect(b.recorded.counts.RoutedDirect).toBe(3);
    expect((await b.board.read()).version).toBe(version);
    await b.lambda.idle();
    expect(b.executions).toHaveLength(1);
    arrived.push(...(await b.drain(target)));

    // A burst deeper than the max depth: MAX_DEPTH direct, the rest staged; the execution
    // revokes, waits out the windows, then fills the target to its capacity and no further.
    let highest = 0;
    let movedAt: number | undefined;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const depth = await b.depth(target);
        highest = Math.max(highest, depth);
        if (depth > MAX_DEPTH) movedAt ??= Date.now();
        await sleep(10);
      }
    })();
    const burst = Array.from({ length: 16 }, (_, i) => ['a', 'b', 'c', 'd'][i % 4]!);
    const routedAt = Date.now();
    await b.route(target, burst, 'burst');
    expect(b.recorded.counts.RoutedDirect).toBe(3 + MAX_DEPTH);
    await eventually(async () => (await b.depth(target)) === capacity || undefined, 'the target filled to capacity');
    // The workers take what is there; the execution moves the rest as room appears.
    const draining = (async () => {
      while (arrived.length < 22) {
        arrived.push(...(await b.drain(target)));
        await sleep(100);
      }
    })();
    await draining;
    await b.lambda.idle();
    sampling = false;
    await sampler;

    const revoked = b.executions.reduce((n, e) => n + e.revocations, 0);
    expect(revoked).toBeGreaterThanOrEqual(1);
    // No pass before the routers' read and publish windows after the revocation were over.
    expect(movedAt! - routedAt).toBeGreaterThanOrEqual(READ_MS + PUBLISH_MS);
    expect(highest).toBeLessThanOrEqual(capacity);
    const expected = [
      ...['one', 'two'].flatMap((p) => [0, 1, 2].map((i) => `${p}-${i}`)),
      ...burst.map((_, i) => `burst-${i}`),
    ];
    expect([...arrived].sort()).toEqual(expected.sort());
    for (const tenant of ['a', 'b', 'c', 'd']) expect(await b.depth(`${target}»/${tenant}`)).toBe(0);
    // Nothing left staged at the end: granted again.
    expect((await b.board.read()).targets.get(target)?.grant).toBeGreaterThan(Date.now());
    expect(b.recorded.failures).toEqual([]);
  }, 60_000);

  it('(e) a target with a broker max-length and the default drop-head overflow never gets a grant while the routers are unknown (no ":<routers>")', async () => {
    const target = 'dropping';
    await b.declare(target, { 'x-max-length': 100 });
    for (const round of ['one', 'two']) {
      await b.route(target, ['a', 'b'], round);
      await b.lambda.idle();
      await sleep(READ_MS + 20);
    }
    expect((await b.board.read()).targets.get(target)?.grant).toBeUndefined();
    expect((await b.drain(target)).sort()).toEqual(['one-0', 'one-1', 'two-0', 'two-1']);
    expect(b.recorded.counts.RoutedDirect).toBe(3 + MAX_DEPTH);
  }, 30_000);

  it('(f) a tenant paused before it has a staging queue on the target: no grant, so its first messages are staged and stay there', async () => {
    const target = 'paused-late';
    const controls = new DynamoTenantControlStore(b.dynamo.doc, TABLE);
    await b.declare(target);
    await controls.update('late', { paused: true });
    try {
      // The pass sees only early's staging queue, all of whose weights are above 0.
      await b.route(target, ['early'], 'early');
      await b.lambda.idle();
      expect(b.executions.at(-1)).toMatchObject({ moved: 1, grants: 0 });
      expect((await b.board.read()).targets.get(target)?.grant).toBeUndefined();
      await sleep(READ_MS + 20); // the router's cached "no grant" lapses

      await b.route(target, ['late', 'late'], 'late');
      await b.lambda.idle();
      expect(b.recorded.counts.RoutedDirect).toBe(3 + MAX_DEPTH);
      expect(await b.drain(target)).toEqual(['early-0']);
      expect(await b.depth(`${target}»/late`)).toBe(2);
      expect((await b.board.read()).targets.get(target)?.grant).toBeUndefined();
    } finally {
      await controls.update('late', { paused: false });
    }
  }, 30_000);

  it('(g) tenant controls that cannot be read: the pass moves with the last ones it read, and grants nothing', async () => {
    const target = 'controls-unread';
    await b.declare(target);
    // Not a controls item the store can read (no entries, no version): a hand edit gone wrong.
    await b.dynamo.doc.send(new PutCommand({ TableName: TABLE, Item: { pk: TENANT_CONTROLS_KEY, note: 'hand edit' } }));
    try {
      await b.route(target, ['a'], 'unread');
      await b.lambda.idle();
      expect(b.executions.at(-1)).toMatchObject({ moved: 1, grants: 0 });
      expect((await b.board.read()).targets.get(target)?.grant).toBeUndefined();
      expect(b.warnings).toContain(CONTROLS_UNREADABLE);
    } finally {
      await b.dynamo.doc.send(new DeleteCommand({ TableName: TABLE, Key: { pk: TENANT_CONTROLS_KEY } }));
    }
  }, 30_000);
});

describe('direct routing under a grant: a drop-head max length that every router at once cannot fill (real RabbitMQ, dynalite)', () => {
  // 4 routers × the max depth 5 = 20 ready messages at most in a granted target (lib/work-board/grants.ts).
  const ROUTERS = 4;
  const DROPPED = 'dropped';
  let b: Awaited<ReturnType<typeof bed>>;
  beforeAll(async () => {
    b = await bed(true, { DIRECT_ROUTING: `granted:${ROUTERS}` });
    const channel = await b.model.createChannel();
    await channel.assertExchange(DROPPED, 'fanout', { durable: true });
    await channel.assertQueue(DROPPED, { durable: true });
    await channel.bindQueue(DROPPED, DROPPED, '');
    await channel.close();
  });
  afterAll(() => b?.close());
  const directNow = () => b.recorded.counts.RoutedDirect ?? 0;

  /** Routes a batch, waits for the execution it asks for, and says whether the target is granted after it. */
  async function stagedThenGranted(target: string): Promise<boolean> {
    await b.route(target, ['a', 'b'], `${target}-staged`);
    await b.lambda.idle();
    return ((await b.board.read()).targets.get(target)?.grant ?? 0) > Date.now();
  }

  it('(h) a drop-head max length of 20 (4 routers × 5) is granted, and the next batch goes direct', async () => {
    const target = 'drop-head-fits';
    await b.declare(target, { 'x-max-length': 20 });
    expect(await stagedThenGranted(target)).toBe(true);
    await sleep(READ_MS + 20); // the router's cached "no grant" lapses
    const before = directNow();
    await b.route(target, ['a', 'b', 'c'], 'direct');
    expect(directNow() - before).toBe(3);
    expect((await b.drain(target)).sort()).toEqual(
      ['direct-0', 'direct-1', 'direct-2', `${target}-staged-0`, `${target}-staged-1`].sort(),
    );
  }, 30_000);

  it.each<[string, Record<string, unknown>]>([
    ['a drop-head max length of 19, below 4 routers × 5', { 'x-max-length': 19 }],
    ['a reject-publish-dlx max length of 19', { 'x-max-length': 19, 'x-overflow': 'reject-publish-dlx' }],
    ['a drop-head byte limit (a message size is not bounded)', { 'x-max-length-bytes': 1_000_000 }],
  ])(
    '(i) never granted: %s',
    async (_, args) => {
      const target = `never-${Object.values(args).join('-')}`;
      await b.declare(target, args);
      expect(await stagedThenGranted(target)).toBe(false);
    },
    30_000,
  );

  it('(j) 4 routers at once under a grant on a drop-head max length of 20: nothing dropped, each message once', async () => {
    const target = 'race';
    await b.declare(target, { 'x-max-length': 20, 'x-dead-letter-exchange': DROPPED });
    // The count can fail: 5 published into a max length of 3 dead-letter the 2 oldest.
    const control = await b.model.createConfirmChannel();
    await control.assertQueue('race-control', { arguments: { 'x-max-length': 3, 'x-dead-letter-exchange': DROPPED } });
    for (let i = 0; i < 5; i++) control.sendToQueue('race-control', Buffer.from(`control-${i}`));
    await control.waitForConfirms();
    await control.close();
    await eventually(async () => (await b.drain(DROPPED)).length === 2 || undefined, 'the control dead-lettered 2');

    expect(await stagedThenGranted(target)).toBe(true);
    const arrived = await b.drain(target);
    await sleep(READ_MS + 20);
    const routers = [b.newRouter(), b.newRouter(), b.newRouter(), b.newRouter()];
    const before = directNow();
    let routing = true;
    // A worker that takes a message every 10 ms makes room while the routers race for it.
    const taker = await b.model.createChannel();
    const worker = (async () => {
      while (routing) {
        const message = await taker.get(target, { noAck: true });
        if (message) arrived.push(message.content.toString());
        await sleep(10);
      }
    })();
    const batches = 8;
    const size = 7;
    await Promise.all(
      routers.map(async (router, r) => {
        for (let n = 0; n < batches; n++) {
          const tenants = Array.from({ length: size }, (_, i) => ['a', 'b', 'c'][(i + n) % 3]!);
          expect(await b.route(target, tenants, `r${r}-b${n}`, router)).toEqual({ batchItemFailures: [] });
        }
      }),
    );
    routing = false;
    await worker;
    await taker.close();
    await Promise.all(routers.map((router) => router.close()));
    const sent = routers.length * batches * size;
    // What was staged is moved by the executions the routers asked for; the workers take it all.
    await eventually(
      async () => {
        arrived.push(...(await b.drain(target)));
        return arrived.length >= sent + 2 || undefined;
      },
      'every routed message in the target',
      60_000,
    );
    await b.lambda.idle();
    expect(directNow() - before).toBeGreaterThan(0);
    expect(await b.drain(DROPPED)).toEqual([]);
    const expected = [
      `${target}-staged-0`,
      `${target}-staged-1`,
      ...routers.flatMap((_, r) =>
        Array.from({ length: batches }, (_, n) => Array.from({ length: size }, (_, i) => `r${r}-b${n}-${i}`)).flat(),
      ),
    ];
    expect([...arrived].sort()).toEqual(expected.sort());
    expect(b.recorded.failures).toEqual([]);
  }, 120_000);
});

describe('direct routing under a grant with the target buffer at its default (real RabbitMQ, dynalite)', () => {
  let b: Awaited<ReturnType<typeof bed>>;
  beforeAll(async () => {
    // The default horizon (250 ms): at light load the buffer keeps a target about MIN_DEPTH (5) deep.
    b = await bed(true, { DISTRIBUTOR_BUFFER_HORIZON_MS: '250' });
  });
  afterAll(() => b?.close());

  it('(k) a target the buffer keeps shallow is granted again once a burst past the max depth is moved', async () => {
    const target = 'buffered';
    await b.declare(target);
    const arrived: string[] = [];
    await b.route(target, ['a', 'b'], 'first');
    await b.lambda.idle();
    expect((await b.board.read()).targets.get(target)?.grant).toBeGreaterThan(Date.now());
    arrived.push(...(await b.drain(target)));
    await sleep(READ_MS + 20);
    // MAX_DEPTH direct, the rest staged: the execution revokes, waits, and moves them as the workers drain.
    const burst = Array.from({ length: 9 }, (_, i) => ['a', 'b', 'c'][i % 3]!);
    await b.route(target, burst, 'burst');
    await eventually(async () => {
      arrived.push(...(await b.drain(target)));
      return arrived.length === 2 + burst.length || undefined;
    }, 'the burst in the target');
    await b.lambda.idle();
    expect(b.executions.reduce((n, e) => n + e.revocations, 0)).toBeGreaterThanOrEqual(1);
    // Nothing left staged: granted again, whatever depth the buffer keeps.
    expect((await b.board.read()).targets.get(target)?.grant).toBeGreaterThan(Date.now());
  }, 60_000);
});
