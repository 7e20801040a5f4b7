import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type ChannelModel, connect } from 'amqplib';
import { z } from 'zod';
import { createCleanupEngine } from '../../../lib/cleanup/engine/engine';
import { DynamoWaitStore } from '../../../lib/distributor/stores/wait-store';
import { managementPath } from '../../../lib/rabbitmq/management';
import { DynamoTenantCounterStore } from '../../../lib/routing/priority/counter-store';
import { defaultRules } from '../../../lib/routing/priority/rules';
import { DIRECT_ROUTING_WINDOWS } from '../../../lib/settings/common';
import { revocationWaitMs } from '../../../lib/work-board/grants';
import { DynamoWorkBoard } from '../../../lib/work-board/work-board-store';
import { runCli } from '../../../local/cli/cli';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';
import { eventually } from '../../harness/eventually';
import { createTestVhost, type TestVhost } from '../../harness/rabbit';
import { cliEnvironment } from './cli-env';

/** Runs the CLI in this process, as `npx fairway …` would, and returns its exit code and output. */
async function fairway(env: Record<string, string>, ...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, env, { out: (t) => (stdout += `${t}\n`), err: (t) => (stderr += `${t}\n`) });
  return { code, stdout, stderr };
}

async function fairwayJson<T = any>(env: Record<string, string>, ...argv: string[]): Promise<T> {
  const { code, stdout, stderr } = await fairway(env, ...argv, '--json');
  if (code !== 0) throw new Error(`fairway ${argv.join(' ')} exited ${code}: ${stderr}`);
  return JSON.parse(stdout) as T;
}

describe('operator CLI against dynalite and RabbitMQ', () => {
  let dynamo: EmbeddedDynamo;
  let vhost: TestVhost;
  let amqp: ChannelModel;
  let env: Record<string, string>;

  beforeAll(async () => {
    // One after the other, so that afterAll stops whatever did start.
    dynamo = await startDynamo();
    vhost = await createTestVhost();
    await dynamo.createTables();
    amqp = await connect(vhost.amqpUrl);
    env = cliEnvironment(dynamo, vhost);
  });
  afterAll(async () => {
    await amqp?.close();
    await Promise.all([dynamo?.stop(), vhost?.delete()]);
  });

  describe('tenants', () => {
    it('lists counters with the router’s levels, busiest first, and resets one', async () => {
      const store = new DynamoTenantCounterStore(dynamo.doc, 'TenantCountersTable', defaultRules);
      const now = Date.now();
      await store.check('noisy', 25, now);
      await store.check('quiet', 1, now);

      const { tenants } = await fairwayJson<{ tenants: any[] }>(env, 'tenants');
      expect(tenants.map((t) => [t.tenant, t.count, t.level, t.resetDue])).toEqual([
        ['noisy', -24, 9, false],
        ['quiet', 0, 1, false],
      ]);

      expect(await fairwayJson(env, 'tenants', '--reset', 'noisy')).toEqual({ reset: 'noisy', existed: true });
      const after = await fairwayJson<{ tenants: any[] }>(env, 'tenants');
      expect(after.tenants.map((t) => t.tenant)).toEqual(['quiet']);
      expect(await fairwayJson(env, 'tenants', '--reset', 'noisy')).toEqual({ reset: 'noisy', existed: false });
    });

    it('prints a table for people by default', async () => {
      const { code, stdout } = await fairway(env, 'tenants');
      expect(code).toBe(0);
      expect(stdout).toMatch(/^tenant\s+count\s+level\s+lastUpdate\s+resetDue$/m);
      expect(stdout).toMatch(/^quiet\s+0\s+1\s/m);
    });

    it('shows the waits in staging the distributor last measured, the longest first (issue 25, item 3)', async () => {
      expect((await fairwayJson<{ waits: unknown[] }>(env, 'tenants')).waits).toEqual([]);
      expect((await fairway(env, 'tenants')).stdout).toContain('none measured yet');
      const at = Date.UTC(2026, 0, 1);
      await new DynamoWaitStore(dynamo.doc, 'DistributorStateTable').record({
        target: 'scan',
        at,
        queues: [
          { queue: 'scan»/slow/ocr', maxMs: 42_000, p50Ms: 30_000, measured: 5 },
          { queue: 'scan»/quick', maxMs: 300, p50Ms: 100, measured: 2 },
        ],
        backlog: [
          { tenant: 'slow', staged: 1200 },
          { tenant: 'quick', staged: 4 },
        ],
      });
      const { waits, noisy } = await fairwayJson<{ waits: any[]; noisy: any[] }>(env, 'tenants');
      // Who is noisy, named (issue 37, item 4).
      expect(noisy.map((n) => [n.target, n.tenant, n.staged])).toEqual([
        ['scan', 'slow', 1200],
        ['scan', 'quick', 4],
      ]);
      expect(waits.map((w) => [w.tenant, w.workflow, w.target, w.waitSeconds, w.measured])).toEqual([
        ['slow', 'ocr', 'scan', 42, 5],
        ['quick', undefined, 'scan', 0.3, 2],
      ]);
      const { stdout } = await fairway(env, 'tenants');
      expect(stdout).toMatch(/^tenant\s+workflow\s+target\s+wait \(s\)\s+p50 \(s\)\s+measured\s+measured at$/m);
      expect(stdout).toMatch(/^slow\s+ocr\s+scan\s+42\s+30\s+5\s+2026-01-01T00:00:00.000Z$/m);
      expect(stdout).toMatch(/^Noisiest tenants/m);
      expect(stdout).toMatch(/^scan\s+slow\s+1200\s+2026-01-01T00:00:00.000Z$/m);
    });
  });

  describe('tenants pause while a target is granted direct routing', () => {
    /** The routers' read and publish windows the CLI waits out (fixed, as the functions have them). */
    const revocationWait = revocationWaitMs(DIRECT_ROUTING_WINDOWS);
    const grant = (target: string, until: number, grantWait?: number) =>
      new DynamoWorkBoard(dynamo.doc, 'DistributorStateTable').writeServed([
        { target, served: 0, grant: until, ...(grantWait === undefined ? {} : { grantWait }) },
      ]);
    const targets = async () => (await new DynamoWorkBoard(dynamo.doc, 'DistributorStateTable').read()).targets;

    it('pause and weight 0 revoke every live grant, due after the routers’ windows; resume and a weight > 0 revoke none', async () => {
      await grant('scan', Date.now() + 60_000);
      await grant('ocr', Date.now() + 60_000);
      await grant('lapsed', Date.now() - 1_000);
      const before = Date.now();
      const paused = await fairway(env, 'tenants', 'pause', 'late', '--force');
      const after = Date.now();
      expect(paused.code).toBe(0);
      expect(paused.stdout).toMatch(/^tenant\s+paused\s+weight\s+grants revoked$/m);
      expect(paused.stdout).toMatch(/^late\s+true\s+2$/m);
      const board = await targets();
      for (const target of ['scan', 'ocr']) {
        expect(board.get(target)?.grant).toBeUndefined();
        expect(board.get(target)?.due).toBeGreaterThanOrEqual(before + revocationWait);
        expect(board.get(target)?.due).toBeLessThanOrEqual(after + revocationWait);
      }
      // A lapsed grant needs no revocation: no router uses it.
      expect(board.get('lapsed')?.due).toBeUndefined();

      await grant('scan', Date.now() + 60_000);
      expect(await fairwayJson(env, 'tenants', 'resume', 'late')).toEqual({ tenant: 'late' });
      expect(await fairwayJson(env, 'tenants', 'weight', 'late', '2', '--force')).toEqual({
        tenant: 'late',
        weight: 2,
      });
      expect((await targets()).get('scan')?.grant).toBeGreaterThan(Date.now());
      expect(await fairwayJson(env, 'tenants', 'weight', 'late', '0')).toEqual({
        tenant: 'late',
        weight: 0,
        revokedGrants: 1,
      });
      expect((await targets()).get('scan')?.grant).toBeUndefined();
      expect(await fairwayJson(env, 'tenants', 'weight', 'late', 'clear')).toEqual({ tenant: 'late' });
    });

    it('a grant written with a longer revocation wait than the CLI’s windows (the deployment’s differ) is waited out in full', async () => {
      const wide = revocationWait + 2_000;
      await grant('wide', Date.now() + 60_000, wide);
      const before = Date.now();
      expect(await fairwayJson(env, 'tenants', 'pause', 'late', '--force')).toMatchObject({
        revokedGrants: 1,
      });
      expect((await targets()).get('wide')?.due).toBeGreaterThanOrEqual(before + wide);
      expect(await fairwayJson(env, 'tenants', 'resume', 'late')).toEqual({ tenant: 'late' });
    });

    it('a grant an execution decided on the controls before a pause, written after it, is refused', async () => {
      const board = new DynamoWorkBoard(dynamo.doc, 'DistributorStateTable');
      const readBefore = (await board.read()).version;
      expect(await fairwayJson(env, 'tenants', 'pause', 'late', '--force')).toMatchObject({ revokedGrants: 0 });
      // The execution's round write, conditional on the version it read before its pass read the controls.
      await board.writeServed([{ target: 'racing', served: readBefore, grant: Date.now() + 60_000 }], readBefore);
      expect((await targets()).get('racing')).toMatchObject({ served: readBefore });
      expect((await targets()).get('racing')?.grant).toBeUndefined();
      expect(await fairwayJson(env, 'tenants', 'resume', 'late')).toEqual({ tenant: 'late' });
    });
  });

  describe('tenants resume asks for passes (issue 34)', () => {
    it('resume and a weight above 0 request the targets where the tenant has staging queues; pause requests none', async () => {
      const channel = await amqp.createConfirmChannel();
      for (const queue of ['held', 'held»/sleepy/ocr', 'other»/sleepy', 'held»/awake']) {
        await channel.assertQueue(queue, { durable: true });
      }
      channel.sendToQueue('held»/sleepy/ocr', Buffer.from('waiting'), { persistent: true });
      await channel.waitForConfirms();
      await channel.close();
      await eventually(async () => {
        const names = (await vhost.api<{ name: string }[]>('GET', managementPath('api', 'queues', vhost.vhost))).map(
          (q) => q.name,
        );
        return names.includes('other»/sleepy') && names.includes('held»/sleepy/ocr') ? true : undefined;
      }, 'the management listing to show the staging queues');
      const board = new DynamoWorkBoard(dynamo.doc, 'DistributorStateTable');
      const requested = async () =>
        new Map([...(await board.read()).targets].map(([target, entry]) => [target, entry.req ?? 0]));

      expect(await fairwayJson(env, 'tenants', 'pause', 'sleepy', '--force')).not.toHaveProperty('passesRequested');
      const before = await requested();
      expect(await fairwayJson(env, 'tenants', 'resume', 'sleepy')).toEqual({
        tenant: 'sleepy',
        passesRequested: ['held', 'other'],
      });
      const after = await requested();
      expect(after.get('held')).toBeGreaterThan(before.get('held') ?? 0);
      expect(after.get('other')).toBeGreaterThan(before.get('other') ?? 0);
      expect(await fairwayJson(env, 'tenants', 'weight', 'sleepy/ocr', '3')).toEqual({
        tenant: 'sleepy/ocr',
        weight: 3,
        passesRequested: ['held'],
      });
      const cleanup = await amqp.createChannel();
      for (const queue of ['held', 'held»/sleepy/ocr', 'other»/sleepy', 'held»/awake'])
        await cleanup.deleteQueue(queue);
      await cleanup.close();
    });
  });

  describe('queues', () => {
    it('shows targets, staging depths and the shares the next pass would plan', async () => {
      const channel = await amqp.createConfirmChannel();
      await channel.assertQueue('scan', { durable: true, arguments: { 'x-max-priority': 9, 'x-max-length': 10 } });
      const fill = async (queue: string, n: number) => {
        await channel.assertQueue(queue, { durable: true, arguments: { 'x-max-priority': 9, 'x-max-length': 10_000 } });
        for (let i = 0; i < n; i++) channel.sendToQueue(queue, Buffer.from(String(i)));
        await channel.waitForConfirms();
      };
      await fill('scan»/big/ocr', 30);
      await fill('scan»/small/ocr', 2);
      await channel.close();

      const view = await eventually(async () => {
        const v = await fairwayJson<{ targets: any[]; staging: any[] }>(env, 'queues');
        return v.staging.reduce((n: number, q: any) => n + q.depth, 0) === 32 ? v : undefined;
      }, 'management stats of the staging queues');
      expect(view.targets).toEqual([
        { target: 'scan', exists: true, depth: 0, maxLength: 10, capacity: 10, stagingQueues: 2, staged: 32 },
      ]);
      // Water-filling: the small queue gets all it holds, the big one the rest of the room.
      expect(view.staging.map((q) => [q.tenant, q.workflow, q.depth, q.nextShare])).toEqual([
        ['big', 'ocr', 30, 8],
        ['small', 'ocr', 2, 2],
      ]);
    });
  });

  describe('stack', () => {
    const job = 'repository-cleanup';

    beforeAll(async () => {
      // A job whose operations always fail, so that the engine dead-letters them after one attempt.
      const engine = createCleanupEngine(
        {
          name: job,
          defaultOperation: { kind: 'fill', payload: {} },
          kinds: {
            fill: {
              payload: z.object({}),
              execute: async () => [1, 2, 3].map((n) => ({ kind: 'broken', payload: { n } })),
            },
            broken: {
              payload: z.object({ n: z.number() }),
              execute: async () => Promise.reject(new Error('disk on fire')),
            },
          },
        },
        { dryRun: false, maxAttempts: 1, leaseMs: 60_000, maxPayloadBytes: 10_000 },
        { doc: dynamo.doc, table: 'CleanupStackTable' },
      );
      await engine.step(); // fills
      await engine.step(); // one operation fails and is set aside
    });

    it('sizes every job’s stack', async () => {
      const { jobs } = await fairwayJson<{ jobs: any[] }>(env, 'stack');
      expect(jobs).toEqual([
        { job: 'registry-timebased-cleanup', size: 0, claimed: 0, deadLetters: 0 },
        { job: 'registry-status90-cleanup', size: 0, claimed: 0, deadLetters: 0 },
        { job, size: 2, claimed: 0, deadLetters: 1 },
      ]);
    });

    it('shows one job’s top, kinds and dead letters, then requeues and drops dead letters', async () => {
      const stack = await fairwayJson(env, 'stack', job, '--top', '1');
      expect(stack).toMatchObject({ job, size: 2, byKind: { broken: 2 } });
      expect(stack.top).toHaveLength(1);
      expect(stack.deadLetters).toHaveLength(1);
      expect(stack.deadLetters[0].error).toContain('disk on fire');

      const dead = stack.deadLetters[0].sk as string;
      const requeued = await fairwayJson(env, 'stack', job, '--requeue', dead);
      expect(requeued).toMatchObject({ job, requeued: dead });
      const after = await fairwayJson(env, 'stack', job);
      expect([after.size, after.deadLetters]).toEqual([3, []]);
      expect(after.top[0].sk).toBe(requeued.as);

      // It is no longer a dead letter: a wrong argument.
      const { code, stderr } = await fairway(env, 'stack', job, '--drop', dead);
      expect(code).toBe(2);
      expect(stderr).toContain(dead);
    });

    it('refuses an unknown job, naming the jobs', async () => {
      const { code, stderr } = await fairway(env, 'stack', 'no-such-job');
      expect(code).toBe(2);
      expect(stderr).toContain('registry-timebased-cleanup');
    });
  });

  describe('invoke', () => {
    it('routes a sample SQS batch through the real router handler', async () => {
      const channel = await amqp.createChannel();
      await channel.assertQueue('ocr', { durable: true, arguments: { 'x-max-priority': 9 } });
      await channel.close();
      const out = await fairwayJson(
        env,
        'invoke',
        'router',
        '--tenant',
        'acme',
        '--target',
        'ocr',
        '--workflow',
        'w1',
        '--count',
        '3',
      );
      expect(out.event.Records).toHaveLength(3);
      expect(out.event.Records[0].eventSource).toBe('aws:sqs');
      expect(out.result).toEqual({ batchItemFailures: [] });
      const check = await amqp.createChannel();
      expect((await check.checkQueue('ocr»/acme/w1')).messageCount).toBe(3);
      await check.close();
    });

    it('names the functions when the name is wrong', async () => {
      const { code, stderr } = await fairway(env, 'invoke', 'routr');
      expect(code).toBe(2);
      expect(stderr).toContain('router, distributor');
    });
  });

  it('runs as `npx fairway` (bin/fairway) with --json output a script can parse', async () => {
    const { stdout } = await promisify(execFile)(
      'node',
      [join(__dirname, '../../../bin/fairway'), 'tenants', '--json'],
      {
        env: { ...process.env, ...env },
      },
    );
    expect(JSON.parse(stdout).tenants).toContainEqual(expect.objectContaining({ tenant: 'quiet', count: 0, level: 1 }));
  }, 60_000);

  it('names missing settings and exits 2', async () => {
    const { code, stderr } = await fairway({}, 'tenants');
    expect(code).toBe(2);
    expect(stderr).toContain('TENANT_TABLE: is required');
  });
});
