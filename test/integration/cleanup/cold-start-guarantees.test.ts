import { coldStart } from '../../harness/cold-start';
import { services } from '../../harness/services';

/**
 * Issue 12, item 10: settings that break a guarantee are refused at cold start (the DynamoDB
 * client's own bound on a hung endpoint: test/integration/platform/dynamo-black-hole.test.ts).
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

  /** A cleanup function's cold start with `env` over the base settings; what it threw. */
  const start = (env: Record<string, string>, name = 'registryStatus90Cleanup') =>
    coldStart(name, { ...saved, ...base, ...env });

  it('starts with the deployed defaults', () => {
    expect(start({})).toBeUndefined();
  });

  // Issue 35: the lease and the time budget follow the timeout (test/unit/settings/fixed-values.test.ts);
  // a deployment that still sets one is told so rather than have it ignored.
  it.each(['CLEANUP_LEASE_SECONDS', 'CLEANUP_TIME_BUDGET_SECONDS'])(
    'refuses %s, removed in 0.2, naming what replaced it',
    (name) => {
      const error = start({ [name]: '60' });
      expect(error?.name).toBe('ConfigError');
      expect(error?.message).toMatch(new RegExp(`${name}: was removed in 0\\.2: .*CLEANUP_FUNCTION_TIMEOUT_SECONDS`));
    },
  );

  it.each([
    ['NXRG_DATABASE_URL', 'http://postgres:secret@127.0.0.1:5432/postgres', /postgres:\/\/ or postgresql:\/\//],
    ['OPENXDS_DATABASE_URL', 'mysql://root:secret@127.0.0.1/x', /postgres:\/\/ or postgresql:\/\//],
    ['DYNAMODB_ENDPOINT', 'ftp://127.0.0.1:8000', /http:\/\/ or https:\/\//],
  ])('refuses %s with the wrong scheme, without quoting it', (variable, value, scheme) => {
    const error = start({ [variable]: value });
    expect(error?.name).toBe('ConfigError');
    expect(error?.message).toMatch(new RegExp(`${variable}: must be a URL starting with ${scheme.source}`));
    expect(error?.message).not.toContain('secret');
  });

  it.each([
    ['AMQP_URL', 'http://guest:guest@127.0.0.1:5672', /amqp:\/\/ or amqps:\/\//],
    ['RABBITMQ_MANAGEMENT_URL', 'amqp://guest:guest@127.0.0.1:15672', /http:\/\/ or https:\/\//],
  ])('the router refuses %s with the wrong scheme', (variable, value, scheme) => {
    const error = start(
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
