import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connect } from 'amqplib';
import { generateRegistry } from '../../harness/cleanup-registry';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';
import { createTestSchema, type TestSchema } from '../../harness/postgres';
import { createTestVhost, type TestVhost } from '../../harness/rabbit';
import { cliEnvironment } from './cli-env';

const bin = join(__dirname, '../../../bin/fairway');

/** `npx fairway …` as a separate process: its exit code, stdout and stderr once it has ended on its own. */
async function fairwayProcess(env: Record<string, string>, ...argv: string[]) {
  try {
    const { stdout, stderr } = await promisify(execFile)('node', [bin, ...argv], {
      env: { PATH: process.env.PATH!, ...env },
      // Far above what an invoke takes: the test is that the process ends by itself, not how fast.
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, killed, stdout, stderr } = error as { code: number; killed: boolean; stdout: string; stderr: string };
    if (killed) throw new Error(`fairway ${argv.join(' ')} did not end by itself: ${stderr}`);
    return { code, stdout, stderr };
  }
}

// docs/operating.md "The operator CLI": each invoke ends once it has answered, and with --json its
// stdout is one JSON document while the handler's logs and metrics go to stderr.
describe('npx fairway invoke <function> --json, as a process', () => {
  let dynamo: EmbeddedDynamo;
  let vhost: TestVhost;
  let nxrg: TestSchema;
  let openxds: TestSchema;
  let env: Record<string, string>;

  beforeAll(async () => {
    dynamo = await startDynamo();
    vhost = await createTestVhost();
    nxrg = await createTestSchema();
    openxds = await createTestSchema();
    await dynamo.createTables();
    // The router's sample event goes to the target `worker-input`, whose shape its staging queue takes.
    const amqp = await connect(vhost.amqpUrl);
    const channel = await amqp.createChannel();
    await channel.assertQueue('worker-input', { durable: true, arguments: { 'x-max-priority': 9 } });
    await amqp.close();
    await generateRegistry(nxrg.pool, openxds.pool, { seed: 'cli', documents: 200, citizens: 20, now: new Date() });
    env = {
      ...cliEnvironment(dynamo, vhost),
      NXRG_DATABASE_URL: nxrg.url,
      OPENXDS_DATABASE_URL: openxds.url,
      CLEANUP_DRY_RUN: 'true',
      NXRG_DOCUMENT_TYPES: 'referral,lab-result,discharge-letter,prescription',
      CLEANUP_TIMEBASED_DOCUMENT_TYPES: '{"referral":{"retentionDays":3650}}',
    };
  }, 60_000);
  afterAll(async () => {
    await Promise.all([dynamo?.stop(), vhost?.delete(), nxrg?.drop(), openxds?.drop()]);
  });

  it.each([
    ['router', (result: any) => expect(result).toEqual({ batchItemFailures: [] })],
    // An execution on a board no router has written yet (no version) leaves at once: it used to spin to its time limit.
    ['distributor', (result: any) => expect(result).toMatchObject({ ending: 'idle', summaries: expect.any(Array) })],
    ['registryTimebasedCleanup', (result: any) => expect(result[0].outcome).toBeDefined()],
    ['registryStatus90Cleanup', (result: any) => expect(result[0].outcome).toBeDefined()],
    ['repositoryCleanup', (result: any) => expect(result[0].outcome).toBeDefined()],
  ])(
    '%s: ends by itself, one JSON document on stdout, logs and metrics on stderr',
    async (fn, check) => {
      const { code, stdout, stderr } = await fairwayProcess(env, 'invoke', fn, '--json');
      expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
      const document = JSON.parse(stdout);
      expect(document.function).toBe(fn);
      check(document.result);
      // The handler's EMF metrics (Powertools writes them to stdout on Lambda) land on stderr.
      expect(stderr).toContain('"_aws"');
    },
    60_000,
  );

  it('a setting missing from the environment says to set it there, not to redeploy', async () => {
    const { code, stdout, stderr } = await fairwayProcess({ ...env, TENANT_TABLE: '' }, 'invoke', 'router', '--json');
    expect(code).toBe(2);
    const document = JSON.parse(stdout);
    expect(document.error).toContain('TENANT_TABLE: is required');
    expect(document.error).toContain('Set these variables in the environment you run fairway from');
    expect(`${stdout}${stderr}`).not.toContain('redeploy');
  }, 60_000);

  // Issue 27: CLEANUP_DRY_RUN defaults to false, so an invoke with it unset deleted for real; a
  // deployed stage defaults to a dry run (serverless.yml cleanupDryRun: true), and so does invoke.
  it('a cleanup job invoked with CLEANUP_DRY_RUN unset runs as a dry run and deletes nothing', async () => {
    const count = async () => Number((await nxrg.pool.query('SELECT count(*) FROM documents')).rows[0].count);
    const before = await count();
    const { CLEANUP_DRY_RUN: _unset, ...rest } = env;
    // The first invocation may stop after filling the stack; the second deletes (or counts).
    let run = { code: 0, stdout: '', stderr: '' };
    let logged = '';
    for (let i = 0; i < 2; i++) {
      run = await fairwayProcess(rest, 'invoke', 'registryTimebasedCleanup', '--json');
      expect({ code: run.code, stderr: run.code === 0 ? '' : run.stderr }).toEqual({ code: 0, stderr: '' });
      logged += run.stderr;
    }
    const { stdout } = run;
    expect(await count()).toBe(before);
    // The steps did reach documents past their retention: they counted them, and deleted none.
    expect(logged).toContain('dry run: would delete documents');
    expect(JSON.parse(stdout).dryRun).toBe(true);
  }, 60_000);
});
