import { paramArgs, runPackage } from './package';

/** The message serverless printed when it refused to package, or undefined when it packaged. */
function refusal(params: Record<string, string>): string | undefined {
  try {
    runPackage(['--stage', 'dev', '--package', '/nonexistent/not-written', ...paramArgs(params)]);
    return undefined;
  } catch (error) {
    const { stdout, stderr } = error as { stdout: Buffer; stderr: Buffer };
    return `${stdout}${stderr}`;
  }
}

// infra/serverless/guard.js: checks that run before anything is bundled or written.
describe('serverless package refuses a stage that would deploy badly', () => {
  it('routers and distributors that could open more broker connections than the budget', () => {
    const message = refusal({ routerReservedConcurrency: '39', routerMaximumConcurrency: '39' });
    expect(message).toContain('may open 41, above rabbitmqConnectionBudget 40');
  }, 60_000);

  it('an SQS event source allowed more concurrent routers than the router may run', () => {
    const message = refusal({ routerMaximumConcurrency: '12' });
    expect(message).toContain('router: its SQS event source may run 12 at once, above its reserved concurrency 10');
  }, 60_000);

  it('a broker function without a reserved concurrency', () => {
    expect(refusal({ distributorReservedConcurrency: '0' })).toContain(
      'distributor: holds a broker connection per container, so it needs a reserved concurrency',
    );
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
