import { createTestVhost, type TestVhost } from '../../harness/rabbit';
import { services } from '../../harness/services';

/**
 * Issue 12, item 5: the AMQP URL's vhost must be RABBITMQ_VHOST. With the URL on `/` and
 * RABBITMQ_VHOST on the vhost the distributor watches, the router declared and published its
 * staging queues in `/`, where no distributor looks. Both functions now refuse to start.
 */
describe.each(['router', 'distributor'])('functions/%s at cold start (real vhost)', (name) => {
  let rabbit: TestVhost;
  const saved = process.env;
  beforeAll(async () => {
    rabbit = await createTestVhost();
  });
  afterAll(async () => {
    process.env = saved;
    await rabbit?.delete();
  });

  const coldStart = (env: Record<string, string>): unknown => {
    process.env = {
      ...saved,
      RABBITMQ_MANAGEMENT_URL: rabbit.managementUrl,
      TENANT_TABLE: 'TenantCountersTable',
      DISTRIBUTOR_TABLE: 'DistributorStateTable',
      DYNAMODB_ENDPOINT: 'http://127.0.0.1:1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      ...env,
    };
    // Each cold start loads the module afresh, with its own copy of lib/: errors are told by name.
    let error: unknown;
    jest.isolateModules(() => {
      try {
        require(`../../../functions/${name}`);
      } catch (caught) {
        error = caught;
      }
    });
    process.env = saved;
    return error;
  };

  it('refuses an AMQP_URL on "/" when RABBITMQ_VHOST names another vhost, naming both settings', () => {
    // services.amqpUrl has no path: amqplib opens vhost "/".
    const error = coldStart({ AMQP_URL: services.amqpUrl, RABBITMQ_VHOST: rabbit.vhost });
    expect((error as Error | undefined)?.name).toBe('ConfigError');
    expect((error as Error).message).toMatch(/AMQP_URL.*RABBITMQ_VHOST/);
    expect((error as Error).message).not.toContain('guest:guest');
  });

  it('refuses a RABBITMQ_VHOST left to its default "/" when AMQP_URL opens another vhost', () => {
    expect((coldStart({ AMQP_URL: rabbit.amqpUrl, RABBITMQ_VHOST: '' }) as Error | undefined)?.message).toMatch(
      /AMQP_URL.*RABBITMQ_VHOST/,
    );
  });

  it('starts when both name the same vhost, written either way', () => {
    expect(coldStart({ AMQP_URL: rabbit.amqpUrl, RABBITMQ_VHOST: rabbit.vhost })).toBeUndefined();
    expect(coldStart({ AMQP_URL: `${services.amqpUrl}/%2F`, RABBITMQ_VHOST: '/' })).toBeUndefined();
    expect(coldStart({ AMQP_URL: services.amqpUrl, RABBITMQ_VHOST: '/' })).toBeUndefined();
  });

  it('refuses a vhost "." or ".."', () => {
    const error = coldStart({ AMQP_URL: `${services.amqpUrl}/..`, RABBITMQ_VHOST: '..' }) as Error | undefined;
    expect(error?.message).toMatch(/RABBITMQ_VHOST: must not be "\." or "\.\."/);
  });
});
