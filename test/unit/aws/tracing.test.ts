import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { SQSClient } from '@aws-sdk/client-sqs';
import { documentClient, namingFailures } from '../../../lib/platform/aws';
import { CLI_AWS_BOUNDS } from '../../../lib/platform/network-bounds';
import { secretsManagerClient } from '../../../lib/platform/secrets';

/**
 * Issue 38, item 5: with tracing on, only the handler's segment reached X-Ray; no AWS SDK client was
 * captured, so DynamoDB, SQS, Lambda, Secrets Manager and EventBridge calls were invisible.
 */
const XRAY_MIDDLEWARE = 'XRaySDKInstrumentation';
const region = 'eu-west-1';

/** Every kind of AWS client a Fairway function or tool builds, through the builders they use. */
const clients = (): [string, { middlewareStack: { identify(): string[] } }][] => [
  ['DynamoDB', documentClient({ region })],
  ['Secrets Manager', secretsManagerClient(undefined, { region })],
  ['Lambda', namingFailures(new LambdaClient({ region }), 'Lambda', CLI_AWS_BOUNDS)],
  ['SQS', namingFailures(new SQSClient({ region }), 'SQS', CLI_AWS_BOUNDS)],
  ['EventBridge', namingFailures(new EventBridgeClient({ region }), 'EventBridge', CLI_AWS_BOUNDS)],
];
const captured = (client: { middlewareStack: { identify(): string[] } }) =>
  client.middlewareStack.identify().some((entry) => entry.startsWith(XRAY_MIDDLEWARE));

describe('AWS SDK clients and X-Ray', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it('with tracing on, on Lambda, every client is captured', () => {
    Object.assign(process.env, { POWERTOOLS_TRACE_ENABLED: 'true', AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x' });
    for (const [service, client] of clients()) expect([service, captured(client)]).toEqual([service, true]);
  });

  it('with tracing off (the default), no client is', () => {
    Object.assign(process.env, { POWERTOOLS_TRACE_ENABLED: 'false', AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x' });
    for (const [service, client] of clients()) expect([service, captured(client)]).toEqual([service, false]);
  });
});
