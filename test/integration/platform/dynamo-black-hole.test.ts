import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../../../lib/platform/aws';
import { AwsServiceError, errorText } from '../../../lib/platform/errors';
import { awsCallBoundMs, DYNAMODB_BOUNDS } from '../../../lib/platform/network-bounds';
import { blackHole, endingOf, type TcpServer } from '../../harness/black-hole';

/** The router's timeout (serverless.yml), the shortest of the functions that call DynamoDB. */
const ROUTER_TIMEOUT_MS = 30_000;

/** Issue 12 item 10, issue 26 item 4: a hung DynamoDB ends a call before any function's timeout, naming DynamoDB. */
describe('the DynamoDB client against an endpoint that accepts and never answers', () => {
  let hole: TcpServer;
  beforeAll(async () => {
    hole = await blackHole();
  });
  afterAll(() => hole?.close());

  it('fails the call with an error naming DynamoDB, before the router times out', async () => {
    expect(awsCallBoundMs(DYNAMODB_BOUNDS)).toBeLessThan(ROUTER_TIMEOUT_MS);
    const doc = documentClient(
      { region: 'eu-west-1', endpoint: hole.url('http') },
      { accessKeyId: 'local', secretAccessKey: 'local' },
    );
    try {
      const ending = await endingOf(doc.send(new GetCommand({ TableName: 't', Key: { pk: 'x' } })), 40_000);
      expect(ending).toMatchObject({ pending: false });
      if (ending.pending) return;
      expect(ending.error).toBeInstanceOf(AwsServiceError);
      expect(errorText(ending.error)).toMatch(/^AwsServiceError: DynamoDB did not answer within \d+ ms/);
      expect(ending.ms).toBeLessThan(ROUTER_TIMEOUT_MS);
      expect(hole.accepted()).toBe(DYNAMODB_BOUNDS.attempts);
    } finally {
      doc.destroy();
    }
  }, 60_000);
});
