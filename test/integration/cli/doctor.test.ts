import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { connect } from 'amqplib';
import { mockClient } from 'aws-sdk-client-mock';
import { managementPath } from '../../../lib/rabbitmq/management';
import { runCli } from '../../../local/cli/cli';
import { type EmbeddedDynamo, startDynamo } from '../../../local/embedded-dynamo';
import { brokerPermissions } from '../../../local/ops/doctor/broker';
import { DemoRegistry } from '../../../local/stack/demo-registry';
import { createDemoVhost, type DemoVhost } from '../../../local/stack/demo-vhost';
import { functionEnvironment } from '../../../local/stack/environment';
import { generateRegistry } from '../../harness/cleanup-registry';
import { createTestSchema } from '../../harness/postgres';
import { services, uniqueName } from '../../harness/services';

interface Doctor {
  code: number;
  checks: { check: string; status: string; detail: string }[];
  stderr: string;
}

async function doctor(env: Record<string, string>, ...args: string[]): Promise<Doctor> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(['doctor', ...args, '--json'], env, {
    out: (t) => (stdout += t),
    err: (t) => (stderr += t),
  });
  return { code, checks: JSON.parse(stdout).checks, stderr };
}

const failures = (result: Doctor) => result.checks.filter((c) => c.status === 'fail');

// Secrets Manager cannot be run here: a stand-in answers GetSecretValue.
const secretsManager = mockClient(SecretsManagerClient);
const SECRET = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:fairway/test/nxrg-AbCdEf';

/**
 * Issue 27 item 1: `fairway doctor` against `npm start`'s stack (the same vhost, embedded DynamoDB
 * and demo registries, the same function environment), all green; then one missing prerequisite at
 * a time, each named, exit 1.
 */
describe('fairway doctor', () => {
  let vhost: DemoVhost;
  let dynamo: EmbeddedDynamo;
  let registry: DemoRegistry;
  let env: Record<string, string>;
  const users: string[] = [];

  beforeAll(async () => {
    vhost = await createDemoVhost(services.amqpUrl, services.managementUrl, uniqueName('fairway-doctor'));
    dynamo = await startDynamo();
    registry = await DemoRegistry.start({ documents: 200, citizens: 20 });
    await dynamo.createTables();
    env = functionEnvironment(
      {
        dynamoEndpoint: dynamo.endpoint,
        amqpUrl: vhost.amqpUrl,
        managementUrl: vhost.managementUrl,
        vhost: vhost.vhost,
        ...registry.urls,
      },
      { stage: 'dev', speed: 300, documentTypes: registry.documentTypes },
    );
    // As npm start declares its worker's target, and as the router stages a tenant's document.
    const connection = await connect(vhost.amqpUrl);
    const channel = await connection.createChannel();
    await channel.assertQueue('worker-input', {
      durable: true,
      arguments: { 'x-max-priority': 9, 'x-max-length': 60 },
    });
    await channel.assertQueue('worker-input»/clinic', { durable: true, arguments: { 'x-max-priority': 9 } });
    await channel.assertQueue('unbounded', { durable: true, arguments: { 'x-max-priority': 9 } });
    await connection.close();
  }, 120_000);
  afterAll(async () => {
    for (const user of users) await vhost.api('DELETE', managementPath('api', 'users', user)).catch(() => undefined);
    await Promise.all([vhost?.delete(), dynamo?.stop(), registry?.stop()]);
  });
  beforeEach(() => secretsManager.reset());

  /** A broker user with `tags`, and `permissions` on the stack's vhost unless left out; its two URLs. */
  async function brokerUser(tags: string, permissions?: typeof brokerPermissions) {
    const name = uniqueName('doctor-user');
    users.push(name);
    await vhost.api('PUT', managementPath('api', 'users', name), { password: 'pw', tags });
    if (permissions) await vhost.api('PUT', managementPath('api', 'permissions', vhost.vhost, name), permissions);
    const withUser = (url: string) => {
      const parsed = new URL(url);
      parsed.username = name;
      parsed.password = 'pw';
      return parsed.toString();
    };
    return { AMQP_URL: withUser(env.AMQP_URL!), RABBITMQ_MANAGEMENT_URL: withUser(env.RABBITMQ_MANAGEMENT_URL!) };
  }

  it('against npm start’s stack: every check passes, exit 0', async () => {
    const result = await doctor(env);
    expect(failures(result)).toEqual([]);
    expect(result.code).toBe(0);
    const names = result.checks.map((c) => c.check);
    for (const name of [
      'configuration: router',
      'configuration: repository-cleanup',
      'DynamoDB table CLEANUP_TABLE',
      'DynamoDB table STAGING_TABLE',
      'broker: AMQP',
      'broker: permissions',
      'target queue worker-input',
      'schema for registry-timebased-cleanup',
      'NXRG indexes',
    ]) {
      expect(names).toContain(name);
    }
    expect(result.checks.find((c) => c.check === 'schedules')?.status).toBe('skipped');
  });

  // Issue 38, item 3: doctor said "every setting valid" for a variable the router refuses at cold
  // start, and did not check the staging-queues table.
  it('a misspelled variable is refused as the functions refuse it, with the nearest name, exit 1', async () => {
    const result = await doctor({ ...env, TENANT_PRIORITY_RESET_SECOND: '5' });
    expect(result.code).toBe(1);
    const router = failures(result).find((c) => c.check === 'configuration: router');
    expect(router?.detail).toContain(
      'TENANT_PRIORITY_RESET_SECOND: is not a variable Fairway reads (did you mean TENANT_PRIORITY_RESET_SECONDS?)',
    );
  });

  it('a missing staging-queues table is named, exit 1', async () => {
    const result = await doctor({ ...env, STAGING_TABLE: 'no-such-staging-table' });
    expect(result.code).toBe(1);
    expect(failures(result)).toEqual([
      expect.objectContaining({
        check: 'DynamoDB table STAGING_TABLE',
        detail: expect.stringContaining('does not exist'),
      }),
    ]);
  });

  it('the permissions it prints for the broker user are enough', async () => {
    const result = await doctor({ ...env, ...(await brokerUser('management', brokerPermissions)) });
    expect(failures(result)).toEqual([]);
  });

  it('a missing DynamoDB table and a missing NXRG table are named, exit 1', async () => {
    const result = await doctor({
      ...env,
      CLEANUP_TABLE: 'no-such-table',
      NXRG_NAMES: JSON.stringify({ deletedDocuments: { table: 'no_such_records' } }),
    });
    expect(result.code).toBe(1);
    expect(failures(result).map((c) => c.check)).toEqual(
      expect.arrayContaining(['DynamoDB table CLEANUP_TABLE', 'schema for registry-timebased-cleanup', 'NXRG indexes']),
    );
    expect(JSON.stringify(failures(result))).toContain('no-such-table does not exist');
    expect(JSON.stringify(failures(result))).toContain('no_such_records');
  });

  it('a target without a length limit is named, exit 1', async () => {
    const result = await doctor(env, '--target', 'unbounded');
    expect(result.code).toBe(1);
    expect(failures(result)).toEqual([
      expect.objectContaining({
        check: 'target queue unbounded',
        detail: expect.stringContaining('has no length limit'),
      }),
    ]);
  });

  it('a secret missing a field is named, exit 1; a well-formed one is read and used', async () => {
    // PGlite takes no password: the secret's login goes to the machine's PostgreSQL, on a registry of its own.
    const nxrg = await createTestSchema();
    try {
      await generateRegistry(nxrg.pool, registry.openxds, {
        seed: 'doctor',
        documents: 50,
        citizens: 5,
        now: new Date(),
      });
      const url = new URL(nxrg.url);
      const { username, password } = url;
      url.username = '';
      url.password = '';
      const secretEnv = { ...env, NXRG_DATABASE_URL: url.toString(), NXRG_DATABASE_SECRET_ARN: SECRET };
      secretsManager.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ username }) });
      const broken = await doctor(secretEnv);
      expect(broken.code).toBe(1);
      expect(failures(broken)).toContainEqual(
        expect.objectContaining({
          check: 'secret: NXRG_DATABASE_SECRET_ARN',
          detail: expect.stringContaining('"password"'),
        }),
      );
      expect(JSON.stringify(broken)).not.toContain(password);

      secretsManager.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ username, password }) });
      const fixed = await doctor(secretEnv);
      expect(failures(fixed)).toEqual([]);
      expect(fixed.checks.find((c) => c.check === 'NXRG database')?.status).toBe('ok');
    } finally {
      await nxrg.drop();
    }
  });

  it('a broker user without permissions on the vhost is named with the command that grants them, exit 1', async () => {
    const result = await doctor({ ...env, ...(await brokerUser('management')) });
    expect(result.code).toBe(1);
    const amqp = failures(result).find((c) => c.check === 'broker: AMQP');
    expect(amqp?.detail).toContain(`may not open vhost "${vhost.vhost}"`);
    expect(amqp?.detail).toContain('rabbitmqctl set_permissions');
  });

  it('a broker user that may only read, and one without a management tag, are named', async () => {
    const readOnly = await doctor({
      ...env,
      ...(await brokerUser('management', { configure: '^$', write: '^$', read: '.*' })),
    });
    expect(failures(readOnly)).toEqual([
      expect.objectContaining({
        check: 'broker: permissions',
        detail: expect.stringContaining('may not configure staging queues'),
      }),
    ]);
    const untagged = await doctor({ ...env, ...(await brokerUser('', brokerPermissions)) });
    expect(failures(untagged).map((c) => c.check)).toContain('broker: management API and user tags');
    expect(JSON.stringify(failures(untagged))).toContain('set_user_tags');
  });

  it('wrong arguments exit 2', async () => {
    let stderr = '';
    const code = await runCli(['doctor', '--stag', 'prod'], env, { out: () => undefined, err: (t) => (stderr += t) });
    expect(code).toBe(2);
    expect(stderr).toContain("Unknown option '--stag'");
  });
});
