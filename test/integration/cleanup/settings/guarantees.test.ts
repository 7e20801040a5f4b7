import { createServer, type Server, type Socket } from 'node:net';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../../../../lib/aws/dynamo';
import { services } from '../../../harness/services';

/**
 * Issue 12, item 10: settings that break a guarantee are refused at cold start, and a hung
 * dependency ends a request before the Lambda timeout instead of leaving it running in a frozen
 * container.
 */
describe('cleanup functions refuse settings that break guarantees, at cold start', () => {
  const saved = process.env;
  afterEach(() => {
    process.env = saved;
  });

  const base = {
    CLEANUP_TABLE: 'CleanupStackTable',
    NXRG_DATABASE_URL: services.databaseUrl,
    OPENXDS_DATABASE_URL: services.databaseUrl,
    CLEANUP_FUNCTION_TIMEOUT_SECONDS: '120',
  };

  /** Loads the function module as Lambda does at cold start; returns what it threw. */
  function coldStart(env: Record<string, string>, name = 'registryStatus90Cleanup'): Error | undefined {
    process.env = { ...saved, ...base, ...env };
    let error: Error | undefined;
    // A fresh module registry per cold start: errors are told apart by name, not class.
    jest.isolateModules(() => {
      try {
        require(`../../../../functions/${name}`);
      } catch (caught) {
        error = caught as Error;
      }
    });
    return error;
  }

  it('starts with the deployed defaults', () => {
    expect(coldStart({})).toBeUndefined();
  });

  it('refuses a lease shorter than the function timeout: two steps could run one operation at once', () => {
    const error = coldStart({ CLEANUP_LEASE_SECONDS: '60' });
    expect(error?.name).toBe('ConfigError');
    expect(error?.message).toMatch(/CLEANUP_LEASE_SECONDS: .*CLEANUP_FUNCTION_TIMEOUT_SECONDS/);
  });

  it('refuses a time budget beyond the function timeout', () => {
    const error = coldStart({ CLEANUP_TIME_BUDGET_SECONDS: '200' });
    expect(error?.name).toBe('ConfigError');
    expect(error?.message).toMatch(/CLEANUP_TIME_BUDGET_SECONDS: .*CLEANUP_FUNCTION_TIMEOUT_SECONDS/);
  });

  it.each([
    ['NXRG_DATABASE_URL', 'http://postgres:secret@127.0.0.1:5432/postgres', /postgres:\/\/ or postgresql:\/\//],
    ['OPENXDS_DATABASE_URL', 'mysql://root:secret@127.0.0.1/x', /postgres:\/\/ or postgresql:\/\//],
    ['DYNAMODB_ENDPOINT', 'ftp://127.0.0.1:8000', /http:\/\/ or https:\/\//],
  ])('refuses %s with the wrong scheme, without quoting it', (variable, value, scheme) => {
    const error = coldStart({ [variable]: value });
    expect(error?.name).toBe('ConfigError');
    expect(error?.message).toMatch(new RegExp(`${variable}: must be a URL starting with ${scheme.source}`));
    expect(error?.message).not.toContain('secret');
  });

  it.each([
    ['AMQP_URL', 'http://guest:guest@127.0.0.1:5672', /amqp:\/\/ or amqps:\/\//],
    ['RABBITMQ_MANAGEMENT_URL', 'amqp://guest:guest@127.0.0.1:15672', /http:\/\/ or https:\/\//],
  ])('the router refuses %s with the wrong scheme', (variable, value, scheme) => {
    const error = coldStart(
      {
        AMQP_URL: services.amqpUrl,
        RABBITMQ_MANAGEMENT_URL: services.managementUrl,
        TENANT_TABLE: 'TenantCountersTable',
        [variable]: value,
      },
      'router',
    );
    expect(error?.name).toBe('ConfigError');
    expect(error?.message).toMatch(new RegExp(`${variable}: must be a URL starting with ${scheme.source}`));
  });
});

describe('the DynamoDB client gives up on a hung endpoint before any Lambda timeout', () => {
  let server: Server;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    // Accepts connections and never answers: a DynamoDB endpoint that hangs.
    server = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('fails the request within 20 s (the router, the shortest function, has 30 s)', async () => {
    const { port } = server.address() as { port: number };
    const doc = documentClient(
      { region: 'eu-west-1', endpoint: `http://127.0.0.1:${port}` },
      { accessKeyId: 'local', secretAccessKey: 'local' },
    );
    const started = Date.now();
    const outcome = await Promise.race([
      doc.send(new GetCommand({ TableName: 't', Key: { pk: 'x' } })).then(
        () => 'answered',
        () => 'failed',
      ),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 20_000)),
    ]);
    doc.destroy();
    expect(outcome).toBe('failed');
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 30_000);
});
