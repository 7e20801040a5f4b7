import { DescribeRuleCommand, EventBridgeClient, ListRuleNamesByTargetCommand } from '@aws-sdk/client-eventbridge';
import { GetFunctionCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { checkSchedules } from '../../../local/ops/doctor/schedules';

// EventBridge rules and deployed functions cannot be had here: stand-ins answer the three calls.
const lambda = mockClient(LambdaClient);
const events = mockClient(EventBridgeClient);
const clients = {
  lambda: new LambdaClient({ region: 'eu-west-1' }),
  events: new EventBridgeClient({ region: 'eu-west-1' }),
};

beforeEach(() => {
  lambda.reset();
  events.reset();
  lambda.on(GetFunctionCommand).callsFake(({ FunctionName }) => ({
    Configuration: { FunctionArn: `arn:aws:lambda:eu-west-1:123456789012:function:${FunctionName}` },
  }));
  events
    .on(ListRuleNamesByTargetCommand)
    .callsFake(({ TargetArn }) => ({ RuleNames: [`rule-of-${TargetArn.split(':').pop()}`] }));
});

describe('fairway doctor: the schedules', () => {
  it('without AWS credentials says it skipped them', async () => {
    expect(await checkSchedules('prod', {})).toEqual([
      { check: 'schedules', status: 'skipped', detail: 'skipped: no AWS credentials' },
    ]);
  });

  it('a local stack has none', async () => {
    const [check] = await checkSchedules('dev', { DYNAMODB_ENDPOINT: 'http://127.0.0.1:1', AWS_ACCESS_KEY_ID: 'x' });
    expect(check!.status).toBe('skipped');
  });

  it('every scheduled function of the stage with its rule enabled: ok; a disabled rule is named', async () => {
    events.on(DescribeRuleCommand).callsFake(({ Name }) => ({
      State: Name === 'rule-of-fairway-prod-repositoryCleanup' ? 'DISABLED' : 'ENABLED',
    }));
    const checks = await checkSchedules('prod', { AWS_REGION: 'eu-west-1' }, clients);
    expect(checks.map((c) => [c.check, c.status])).toEqual([
      ['schedule of fairway-prod-distributor', 'ok'],
      ['schedule of fairway-prod-registryTimebasedCleanup', 'ok'],
      ['schedule of fairway-prod-registryStatus90Cleanup', 'ok'],
      ['schedule of fairway-prod-repositoryCleanup', 'fail'],
    ]);
    expect(checks[3]!.detail).toContain('its rule is disabled but the stage says enabled');
  });

  it('a function that is not deployed is named', async () => {
    lambda
      .on(GetFunctionCommand)
      .rejects(Object.assign(new Error('Function not found'), { name: 'ResourceNotFoundException' }));
    const checks = await checkSchedules('prod', {}, clients);
    expect(checks.every((c) => c.status === 'fail' && c.detail.includes('is not deployed'))).toBe(true);
  });
});
