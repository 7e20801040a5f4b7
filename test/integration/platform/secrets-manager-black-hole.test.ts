import { errorText } from '../../../lib/platform/errors';
import { SecretCredentials, SecretError } from '../../../lib/platform/secrets';
import { blackHole, endingOf, type TcpServer } from '../../harness/black-hole';

/** The router's timeout (serverless.yml), the shortest of the functions that read secrets. */
const ROUTER_TIMEOUT_MS = 30_000;
const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:fairway/test/nxrg-AbCdEf';

// Issue 26 item 4: the functions' secret reads are bounded. The client is the one the functions
// build (no client passed in), sent to a server that accepts and never answers through the AWS
// SDK's own endpoint variable.
describe('secret reads against a Secrets Manager that accepts and never answers', () => {
  let hole: TcpServer;
  const saved = { ...process.env };
  beforeAll(async () => {
    hole = await blackHole();
    Object.assign(process.env, {
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_ENDPOINT_URL_SECRETS_MANAGER: hole.url('http'),
    });
  });
  afterAll(async () => {
    process.env = saved;
    await hole?.close();
  });

  it('fail with an error naming the secret and Secrets Manager, before the router times out', async () => {
    const ending = await endingOf(new SecretCredentials().get(ARN), 40_000);
    expect(ending).toMatchObject({ pending: false });
    if (ending.pending) return;
    expect(ending.error).toBeInstanceOf(SecretError);
    expect(errorText(ending.error)).toMatch(/^SecretError: Secret arn:aws:secretsmanager:\S+ could not be read/);
    expect(errorText(ending.error)).toMatch(/Secrets Manager did not answer within \d+ ms/);
    expect(ending.ms).toBeLessThan(ROUTER_TIMEOUT_MS);
    expect(hole.accepted()).toBeGreaterThan(0); // it reached the server, which never answered
  }, 60_000);
});
