import { awsCallBoundMs, CLI_AWS_BOUNDS } from '../../../lib/platform/network-bounds';
import { runCli } from '../../../local/cli/cli';
import { checkSchedules } from '../../../local/ops/doctor/schedules';
import { resolveSecrets } from '../../../local/ops/doctor/secrets';
import { blackHole, endingOf, type TcpServer } from '../../harness/black-hole';

/** Several times the CLI's bound for one AWS call: a command must end well before, not hang. */
const GIVE_UP_MS = 3 * awsCallBoundMs(CLI_AWS_BOUNDS);

// Issue 26 item 4: the operator CLI's AWS clients (SQS, Lambda, EventBridge, Secrets Manager) are
// bounded (CLI_AWS_BOUNDS). Each is sent to a server that accepts and never answers, through its
// endpoint setting or the AWS SDK's own endpoint variable.
describe('the CLI against AWS endpoints that accept and never answer', () => {
  let hole: TcpServer;
  const saved = { ...process.env };
  const credentials = { AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local' };
  beforeAll(async () => {
    hole = await blackHole();
    Object.assign(process.env, credentials, {
      AWS_ENDPOINT_URL_LAMBDA: hole.url('http'),
      AWS_ENDPOINT_URL_EVENTBRIDGE: hole.url('http'),
      AWS_ENDPOINT_URL_SECRETS_MANAGER: hole.url('http'),
    });
  });
  afterAll(async () => {
    process.env = saved;
    await hole?.close();
  });

  it('fairway dlq list fails, naming SQS', async () => {
    let stderr = '';
    const run = runCli(
      ['dlq', 'list', '--log', '/dev/null'],
      { ...credentials, SQS_ENDPOINT: hole.url('http') },
      {
        out: () => undefined,
        err: (text) => (stderr += text),
      },
    );
    const ending = await endingOf(run, GIVE_UP_MS);
    expect(ending).toMatchObject({ pending: false, error: undefined });
    expect(await run).not.toBe(0);
    expect(stderr).toMatch(/SQS did not answer within \d+ ms/);
  });

  it("doctor's schedule checks fail, naming Lambda", async () => {
    const run = checkSchedules('prod', credentials);
    const ending = await endingOf(run, GIVE_UP_MS);
    expect(ending).toMatchObject({ pending: false, error: undefined });
    const checks = await run;
    expect(checks.length).toBeGreaterThan(0);
    for (const check of checks)
      expect(check).toMatchObject({ detail: expect.stringMatching(/Lambda did not answer within/) });
  });

  it("doctor's secret check fails, naming Secrets Manager", async () => {
    const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:fairway/test/nxrg-AbCdEf';
    const run = resolveSecrets({ ...credentials, NXRG_DATABASE_SECRET_ARN: arn });
    const ending = await endingOf(run, GIVE_UP_MS);
    expect(ending).toMatchObject({ pending: false, error: undefined });
    const { checks } = await run;
    expect(checks).toEqual([
      expect.objectContaining({ detail: expect.stringMatching(/Secrets Manager did not answer within/) }),
    ]);
  });
});
