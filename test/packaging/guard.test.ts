import { paramArgs, runPackage, startableParams, takeTurnsPackaging } from './package';

takeTurnsPackaging();

/** The message serverless printed when it refused to package `params` over `base` (a stage that starts), or undefined. */
function refusal(params: Record<string, string>, base: Readonly<Record<string, string>> = startableParams) {
  try {
    runPackage(['--stage', 'dev', '--package', '/nonexistent/not-written', ...paramArgs({ ...base, ...params })]);
    return undefined;
  } catch (error) {
    const { stdout, stderr } = error as { stdout: Buffer; stderr: Buffer };
    return `${stdout}${stderr}`;
  }
}

// infra/serverless/guard.js: checks that run before anything is bundled or written.
describe('serverless package refuses a stage that would deploy badly', () => {
  it('routers and distributors that could open more broker connections than the budget', () => {
    // 38 routers and the distributor's 3 (its 2 executions and the schedule's).
    const message = refusal({ routerReservedConcurrency: '38', routerMaximumConcurrency: '38' });
    expect(message).toContain('may open 41, above rabbitmqConnectionBudget 40');
  }, 60_000);

  it('an SQS event source allowed more concurrent routers than the router may run', () => {
    const message = refusal({ routerMaximumConcurrency: '12' });
    expect(message).toContain('router: its SQS event source may run 12 at once, above its reserved concurrency 10');
  }, 60_000);

  it('a distributor reserved fewer containers than its executions and the schedule need', () => {
    expect(refusal({ distributorReservedConcurrency: '2' })).toContain(
      'distributor: its reserved concurrency 2 is below DISTRIBUTOR_MAX_EXECUTIONS + 1 (3)',
    );
  }, 60_000);

  it('a broker function without a reserved concurrency', () => {
    expect(refusal({ distributorReservedConcurrency: '0' })).toContain(
      'distributor: holds a broker connection per container, so it needs a reserved concurrency',
    );
  }, 60_000);
});

// infra/serverless/credentials.js (issue 23, item 5): whatever a URL's shape, credentials in it are refused unseen.
describe('serverless package refuses anything like credentials in a URL param, and prints none of it', () => {
  const PASSWORD = 'Pa55-Qz9x-Wv7k';

  it('a mistyped or malformed URL with a password, in any URL param', () => {
    const message = refusal({
      amqpUrl: `amqps:/fairway:${PASSWORD}@b-1234.mq.example:5671`,
      rabbitmqManagementUrl: `fairway:${PASSWORD}@b-1234.mq.example`,
      nxrgDatabaseUrl: `postgres://fairway:${PASSWORD}/x@nxrg.example/nxrg`,
      openxdsDatabaseUrl: `postgres://openxds.example/openxds?user=fairway&password=${PASSWORD}`,
    })!;
    for (const param of ['amqpUrl', 'rabbitmqManagementUrl', 'nxrgDatabaseUrl', 'openxdsDatabaseUrl'])
      expect(message).toContain(`param ${param} looks like a URL with credentials`);
    expect(message).toContain('router: AMQP_URL looks like a URL with credentials');
    expect(message).toContain('repositoryCleanup: OPENXDS_DATABASE_URL looks like a URL with credentials');
    for (let i = 0; i + 4 <= PASSWORD.length; i++) expect(message).not.toContain(PASSWORD.slice(i, i + 4));
  }, 60_000);
});

// infra/serverless/startable.js (issue 27, item 3): a stage that could not start is not packaged.
describe('serverless package refuses a stage that cannot start', () => {
  it('an empty required URL (serverless.yml defaults every URL to empty)', () => {
    const { rabbitmqManagementUrl: _, ...withoutManagementUrl } = startableParams;
    // Issue 38, item 7: the refusal names the param the operator types, not only the variable.
    expect(refusal({}, withoutManagementUrl)).toContain(
      'distributor: RABBITMQ_MANAGEMENT_URL is empty; set the param rabbitmqManagementUrl (--param="rabbitmqManagementUrl=…")',
    );
  }, 60_000);

  it('subnets without security groups', () => {
    expect(refusal({ vpcSubnetIds: 'subnet-0a1b2c3d' })).toContain(
      'vpcSubnetIds is set but vpcSecurityGroupIds is empty',
    );
  }, 60_000);

  it('packages the same stage once it can start', () => {
    expect(refusal({ vpcSubnetIds: 'subnet-0a1b2c3d', vpcSecurityGroupIds: 'sg-0123abcd' })).toBeUndefined();
  }, 60_000);
});

// infra/serverless/schedule.js: the cleanup errors alarms take their period from the schedule.
describe('serverless package refuses a cleanup schedule its errors alarm cannot count', () => {
  it.each([
    ['cron(0 3 * * ? *)', 'is not a rate(N minutes|hours|days) expression'],
    ['rate(3 days)', 'is too long for an alarm over 3 schedules (CloudWatch allows 604800 s)'],
  ])(
    '%s',
    (rate, problem) => {
      expect(refusal({ repositoryCleanupRate: rate })).toContain(`repositoryCleanupRate: "${rate}" ${problem}`);
    },
    60_000,
  );
});
