import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChannelModel, connect } from 'amqplib';
import { DynamoTenantControlStore } from '../../../lib/distributor/stores/tenant-control-store';
import { DynamoTenantCounterStore } from '../../../lib/routing/priority/counter-store';
import { defaultRules } from '../../../lib/routing/priority/rules';
import { runCli } from '../../../local/cli/cli';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';
import { eventually } from '../../harness/eventually';
import { createTestVhost, type TestVhost } from '../../harness/rabbit';
import { cliEnvironment } from './cli-env';

/** Runs the CLI in this process, as `npx fairway …` would: its exit code and what it wrote where. */
async function fairway(env: Record<string, string>, ...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, env, { out: (t) => (stdout += `${t}\n`), err: (t) => (stderr += `${t}\n`) });
  return { code, stdout, stderr };
}

/** A usage error: exit 2, one line on stderr naming what was wrong and where help is, never the whole usage. */
function expectUsageError(result: { code: number; stderr: string }, said: string | RegExp) {
  expect(result.code).toBe(2);
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(said);
  expect(lines[0]).toMatch(/see `fairway (\w+ )?--help`/);
}

// Issue 27 item 4 (and issue 23 item 10's tenant names): the CLI refuses mistakes with the documented
// exit codes (2 wrong arguments, 1 failure), one line and a hint, and a JSON error with --json.
describe('the operator CLI refuses mistakes', () => {
  let dynamo: EmbeddedDynamo;
  let vhost: TestVhost;
  let amqp: ChannelModel;
  let env: Record<string, string>;
  let controls: DynamoTenantControlStore;

  beforeAll(async () => {
    dynamo = await startDynamo();
    vhost = await createTestVhost();
    await dynamo.createTables();
    amqp = await connect(vhost.amqpUrl);
    env = cliEnvironment(dynamo, vhost);
    controls = new DynamoTenantControlStore(dynamo.doc, 'DistributorStateTable');
    // `counted` has a counter; `staged` only a staging queue (of workflow ocr).
    await new DynamoTenantCounterStore(dynamo.doc, 'TenantCountersTable', defaultRules).check('counted', 1, Date.now());
    const channel = await amqp.createChannel();
    await channel.assertQueue('scan', { durable: true, arguments: { 'x-max-priority': 9, 'x-max-length': 10 } });
    await channel.assertQueue('scan»/staged/ocr', { durable: true, arguments: { 'x-max-priority': 9 } });
    await channel.close();
    // The management API lists a new queue within a few seconds.
    await eventually(async () => {
      const { stdout } = await fairway(env, 'queues', '--json');
      return JSON.parse(stdout).staging.length === 1 || undefined;
    }, 'the staging queue in the management listing');
  });
  afterAll(async () => {
    await amqp?.close();
    await Promise.all([dynamo?.stop(), vhost?.delete()]);
  });

  describe('tenants weight with a negative number', () => {
    it('says what a weight must be, in one line, exit 2', async () => {
      expectUsageError(
        await fairway(env, 'tenants', 'weight', 'counted', '-1'),
        /weight must be a number from 0 to 1000/,
      );
    });

    it('with --json prints {"error": …} on stdout', async () => {
      const { code, stdout } = await fairway(env, 'tenants', 'weight', 'counted', '-1', '--json');
      expect(code).toBe(2);
      expect(JSON.parse(stdout)).toEqual({ error: expect.stringContaining('weight must be a number from 0 to 1000') });
    });

    it('a JSON error also for an option the command does not know', async () => {
      const { code, stdout } = await fairway(env, 'tenants', '--json', '--nope');
      expect(code).toBe(2);
      expect(JSON.parse(stdout).error).toContain("Unknown option '--nope'");
    });
  });

  describe('a control for a tenant never seen', () => {
    it.each([
      ['pause', ['pause', 'no-such-tenant']],
      ['weight', ['weight', 'no-such-tenant', '3']],
      ['a workflow no staging queue has', ['pause', 'staged/no-such-workflow']],
    ])('%s is refused, exit 2, and nothing is stored', async (_, args) => {
      expectUsageError(await fairway(env, 'tenants', ...args), /has never been seen.*--force/);
      expect(await controls.read()).toEqual({});
    });

    it('is stored with --force', async () => {
      const { code } = await fairway(env, 'tenants', 'pause', 'not-yet-here', '--force');
      expect(code).toBe(0);
      expect((await controls.read())['not-yet-here']).toEqual({ paused: true });
      // A control that exists can be undone without --force, seen or not.
      expect((await fairway(env, 'tenants', 'resume', 'not-yet-here')).code).toBe(0);
      expect(await controls.read()).toEqual({});
    });

    it('a tenant with a counter, or with a staging queue, is seen', async () => {
      expect((await fairway(env, 'tenants', 'weight', 'counted', '2')).code).toBe(0);
      expect((await fairway(env, 'tenants', 'pause', 'staged')).code).toBe(0);
      expect((await fairway(env, 'tenants', 'pause', 'staged/ocr')).code).toBe(0);
      expect(await controls.read()).toEqual({
        counted: { weight: 2 },
        staged: { paused: true },
        'staged/ocr': { paused: true },
      });
    });
  });

  it.each([
    ['a blank name', ' '],
    ['..', '..'],
    ['a name of 300 bytes', 'x'.repeat(300)],
    ['a name with the staging separator', 'a»b'],
  ])('a tenant name no staging queue can have is refused even with --force: %s', async (_, name) => {
    expectUsageError(await fairway(env, 'tenants', 'pause', name, '--force'), /tenant/);
  });

  it('stack --requeue of a dead letter the job does not have: exit 2, one line', async () => {
    expectUsageError(
      await fairway(env, 'stack', 'repository-cleanup', '--requeue', 'nosuch'),
      /has no dead-lettered operation "nosuch"/,
    );
    expectUsageError(await fairway(env, 'stack', 'repository-cleanup', '--drop', 'nosuch'), /nosuch/);
  });

  describe('invoke --event', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'fairway-event-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('a file that does not exist: exit 2, one line naming it', async () => {
      const missing = join(dir, 'missing.json');
      expectUsageError(await fairway(env, 'invoke', 'router', '--event', missing), /cannot read .*missing\.json/);
    });

    it('a file that is not JSON: exit 2, one line naming it', async () => {
      const malformed = join(dir, 'malformed.json');
      writeFileSync(malformed, '{"Records": [');
      expectUsageError(await fairway(env, 'invoke', 'router', '--event', malformed), /malformed\.json is not JSON/);
    });
  });

  it('invoke router --count 3 sends three messages with distinct messageIds', async () => {
    const channel = await amqp.createChannel();
    await channel.assertQueue('ids', { durable: true, arguments: { 'x-max-priority': 9 } });
    const { code, stdout } = await fairway(
      env,
      'invoke',
      'router',
      '--tenant',
      'counted',
      '--target',
      'ids',
      '--count',
      '3',
      '--json',
    );
    expect(code).toBe(0);
    const sent = JSON.parse(stdout).event.Records.map((r: { body: string }) => JSON.parse(r.body));
    expect(new Set(sent.map((e: any) => e.message.properties.messageId)).size).toBe(3);
    const received: string[] = [];
    for (let i = 0; i < 3; i++) {
      const message = await channel.get('ids»/counted', { noAck: true });
      if (message) received.push(message.properties.messageId as string);
    }
    expect(new Set(received).size).toBe(3);
    await channel.close();
  });

  describe('usage errors are one line with a hint', () => {
    it('an unknown subcommand', async () => {
      expectUsageError(await fairway(env, 'tenants', 'frobnicate'), /unknown subcommand "frobnicate"/);
    });

    it('an unknown option', async () => {
      expectUsageError(await fairway(env, 'stack', '--nope'), /Unknown option '--nope'/);
    });

    it('an unknown command', async () => {
      expectUsageError(await fairway(env, 'tenant'), /unknown command "tenant"/);
    });
  });
});
