import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { coldStart } from '../../harness/cold-start';
import { services } from '../../harness/services';

/**
 * Issue 23, items 7 and 10: every cold-start failure of a function names the variable, says what
 * to fix, never shows the value, and is counted by the configuration-failure alarm's metric filter
 * (infra/alarms.yml), here matched against the line the Lambda runtime logs for an init error.
 */
const root = join(__dirname, '../../..');
const PASSWORD = 'Pa55-Secret';

/** The FilterPattern of the metric filters that count ConfigurationFailures: one, shared by every function. */
function configurationFailurePatterns(): string[] {
  const alarms = parse(readFileSync(join(root, 'infra/alarms.yml'), 'utf8'), { merge: true });
  const patterns = Object.values<any>(alarms.Resources)
    .filter(
      (r) =>
        r.Type === 'AWS::Logs::MetricFilter' &&
        r.Properties.MetricTransformations.some((t: any) => t.MetricName === 'ConfigurationFailures'),
    )
    .map((r) => r.Properties.FilterPattern as string);
  expect(patterns).toHaveLength(5);
  return [...new Set(patterns)];
}

/**
 * Whether CloudWatch Logs' filter `pattern` matches the unstructured `line`: every term must occur,
 * a quoted term as written (case-sensitive). Other pattern syntax fails the test rather than guess.
 */
function matchesFilter(pattern: string, line: string): boolean {
  const terms = [...pattern.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
  for (const term of terms) if (/^[?-]|[{}[\]$]/.test(term)) throw new Error(`unsupported filter term ${term}`);
  return terms.every((term) => line.includes(term));
}

/** The line the Node.js Lambda runtime logs for an error thrown at init (its own enumerable fields included). */
const runtimeLogLine = (error: Error) =>
  `2026-12-01T10:00:00.000Z\tundefined\tERROR\tUncaught Exception \t${JSON.stringify({
    errorType: error.name,
    errorMessage: error.message,
    ...error,
  })}`;

const routerEnv = {
  AMQP_URL: services.amqpUrl,
  RABBITMQ_MANAGEMENT_URL: services.managementUrl,
  TENANT_TABLE: 'TenantCountersTable',
  DISTRIBUTOR_TABLE: 'DistributorStateTable',
  DYNAMODB_ENDPOINT: 'http://127.0.0.1:1',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
};
const cleanupEnv = {
  CLEANUP_TABLE: 'CleanupStackTable',
  NXRG_DATABASE_URL: services.databaseUrl,
  OPENXDS_DATABASE_URL: services.databaseUrl,
  DYNAMODB_ENDPOINT: 'http://127.0.0.1:1',
};

const saved = process.env;
afterEach(() => {
  process.env = saved;
});

/** functions/`name`'s cold start with `env` over its base settings; what it threw. */
const start = (name: string, env: Record<string, string>) =>
  coldStart(name, { ...saved, ...(name === 'router' || name === 'distributor' ? routerEnv : cleanupEnv), ...env });

/** Asserts `error` is a counted configuration failure naming `variable` with `remedy`, and showing no `secret`. */
function expectConfigurationFailure(error: Error | undefined, variable: string, remedy: RegExp, secret: string) {
  expect(error?.name).toBe('ConfigError');
  expect(error!.message).toMatch(new RegExp(`${variable}: [^;]*${remedy.source}`));
  const line = runtimeLogLine(error!);
  expect(line).not.toContain(secret);
  expect(line).not.toContain(encodeURIComponent(secret));
  for (const pattern of configurationFailurePatterns()) expect(matchesFilter(pattern, line)).toBe(true);
}

describe('a malformed connection URL fails the cold start naming its variable, never showing it', () => {
  const encodeThem = /percent-encode them/;
  it.each<[string, string, string, RegExp]>([
    ['router', 'AMQP_URL', `amqp://%zz:${PASSWORD}@127.0.0.1:5672`, /write a literal % as %25/],
    ['router', 'AMQP_URL', `amqp://guest:${PASSWORD}@127.0.0.1:5672/%zz`, /write a literal % as %25/],
    ['router', 'AMQP_URL', `amqp://guest:${PASSWORD}%@127.0.0.1:5672`, /write a literal % as %25/],
    ['distributor', 'AMQP_URL', `amqp://guest:${PASSWORD}/x@127.0.0.1:5672`, encodeThem],
    ['distributor', 'AMQP_URL', `amqp://guest:${PASSWORD}#x@127.0.0.1:5672`, encodeThem],
    ['router', 'AMQP_URL', `amqp://guest:${PASSWORD}?x@127.0.0.1:5672`, encodeThem],
    ['router', 'AMQP_URL', `amqps:/guest:${PASSWORD}@127.0.0.1:5671`, /must have "\/\/" after the scheme/],
    ['router', 'RABBITMQ_MANAGEMENT_URL', `http://guest:${PASSWORD}/x@127.0.0.1:15672`, encodeThem],
    ['distributor', 'AMQP_URL', `amqp://guest:%FF${PASSWORD}@127.0.0.1:5672`, /encode each character as its UTF-8/],
    ['registryTimebasedCleanup', 'NXRG_DATABASE_URL', `postgres://u:${PASSWORD}/x@127.0.0.1/db`, encodeThem],
    ['repositoryCleanup', 'OPENXDS_DATABASE_URL', `postgres:/u:${PASSWORD}@127.0.0.1/db`, /after the scheme/],
    ['registryStatus90Cleanup', 'NXRG_DATABASE_URL', `postgres://u:${PASSWORD}%zz@127.0.0.1/db`, /%25/],
  ])('%s: %s = %s', (name, variable, value, remedy) => {
    expectConfigurationFailure(start(name, { [variable]: value }), variable, remedy, PASSWORD);
  });

  it('the vhost rule names both settings and quotes neither (a mistyped URL puts the password in the "vhost")', () => {
    const error = start('router', { AMQP_URL: `amqp://guest:guest@127.0.0.1:5672/${PASSWORD}` });
    expectConfigurationFailure(error, 'AMQP_URL', /RABBITMQ_VHOST/, PASSWORD);
  });
});

describe('a misspelled variable with a Fairway prefix fails the cold start, naming the closest known one', () => {
  it.each([
    ['router', 'TENANT_PRIORITY_RESET_SECOND', 'TENANT_PRIORITY_RESET_SECONDS'],
    ['router', 'ROUTER_TARGET', 'ROUTER_TARGETS'],
    ['distributor', 'DISTRIBUTOR_WEIGHT', 'DISTRIBUTOR_WEIGHTS'],
    ['distributor', 'RABBITMQ_VHOTS', 'RABBITMQ_VHOST'],
    ['registryTimebasedCleanup', 'CLEANUP_DRYRUN', 'CLEANUP_DRY_RUN'],
    ['repositoryCleanup', 'OPENXDS_DATABASE_SECRET', 'OPENXDS_DATABASE_SECRET_ARN'],
    ['registryStatus90Cleanup', 'NXRG_NAME', 'NXRG_NAMES'],
  ])('%s: %s', (name, misspelled, known) => {
    const error = start(name, { [misspelled]: PASSWORD });
    expectConfigurationFailure(error, misspelled, new RegExp(`did you mean ${known}\\?`), PASSWORD);
  });
});
