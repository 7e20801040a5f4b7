import { specProblems } from './cfn-spec';
import { ofType, packageTemplate, ref, startableParams, type Template, takeTurnsPackaging } from './package';

takeTurnsPackaging();

const scheduled = [
  ['DistributorLambdaFunction', 'DistributorHeartbeatAlarm', 'distributorRate', 'distributorEnabled'],
  [
    'RegistryTimebasedCleanupLambdaFunction',
    'RegistryTimebasedCleanupHeartbeatAlarm',
    'registryTimebasedCleanupRate',
    'registryTimebasedCleanupEnabled',
  ],
  [
    'RegistryStatus90CleanupLambdaFunction',
    'RegistryStatus90CleanupHeartbeatAlarm',
    'registryStatus90CleanupRate',
    'registryStatus90CleanupEnabled',
  ],
  [
    'RepositoryCleanupLambdaFunction',
    'RepositoryCleanupHeartbeatAlarm',
    'repositoryCleanupRate',
    'repositoryCleanupEnabled',
  ],
] as const;

/** CloudFormation's reading of a condition made only of Fn::Equals / Fn::Not on resolved strings. */
function holds(template: Template, name: string): boolean {
  const evaluate = (node: any): boolean => {
    if (node['Fn::Equals']) return node['Fn::Equals'][0] === node['Fn::Equals'][1];
    if (node['Fn::Not']) return !evaluate(node['Fn::Not'][0]);
    throw new Error(`condition ${name} uses more than Fn::Equals/Fn::Not`);
  };
  return evaluate(template.Conditions![name]);
}

// Issue 27 item 5: a schedule or function that stops being invoked alarms; X-Ray tracing is a stage setting, off by default.
describe('heartbeats and tracing (serverless package, offline)', () => {
  let dev: Template;
  let changed: Template;
  beforeAll(() => {
    dev = packageTemplate('dev', startableParams);
    changed = packageTemplate('dev', {
      ...startableParams,
      tracing: 'true',
      repositoryCleanupEnabled: 'false',
      registryStatus90CleanupRate: 'rate(2 hours)',
    });
  }, 120_000);

  it.each(scheduled)('%s: an alarm fires when it is not invoked for three schedule intervals', (fn, alarm) => {
    const props = dev.Resources[alarm]!.Properties;
    expect(props).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Invocations',
      Statistic: 'Sum',
      Period: 60,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 3,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      // A function never invoked emits no datapoint at all.
      TreatMissingData: 'breaching',
    });
    expect(props.Dimensions).toEqual([{ Name: 'FunctionName', Value: { Ref: fn } }]);
    expect((props.AlarmActions as unknown[]).map(ref)).toEqual(['AlarmTopic']);
    expect(holds(dev, dev.Resources[alarm]!.Condition!)).toBe(true);
  });

  it('follows the schedule’s rate, and a stage that disables a schedule gets no heartbeat for it', () => {
    expect(changed.Resources.RegistryStatus90CleanupHeartbeatAlarm!.Properties.Period).toBe(7200);
    expect(holds(changed, changed.Resources.RepositoryCleanupHeartbeatAlarm!.Condition!)).toBe(false);
    expect(holds(changed, changed.Resources.DistributorHeartbeatAlarm!.Condition!)).toBe(true);
  });

  it('tracing is off by default: no X-Ray on any function, Tracer told so, no X-Ray policy', () => {
    for (const [, fn] of ofType(dev, 'AWS::Lambda::Function')) {
      expect(fn.Properties.TracingConfig).toBeUndefined();
      expect(fn.Properties.Environment.Variables.POWERTOOLS_TRACE_ENABLED).toBe('false');
    }
    expect(holds(dev, dev.Resources.TracingPolicy!.Condition!)).toBe(false);
  });

  it('tracing: true traces every function actively and lets every role write to X-Ray, and nothing else', () => {
    const functions = ofType(changed, 'AWS::Lambda::Function');
    for (const [, fn] of functions) {
      expect(fn.Properties.TracingConfig).toEqual({ Mode: 'Active' });
      expect(fn.Properties.Environment.Variables.POWERTOOLS_TRACE_ENABLED).toBe('true');
    }
    const policy = changed.Resources.TracingPolicy!;
    expect(holds(changed, policy.Condition!)).toBe(true);
    expect(policy.Properties.Roles.map(ref).sort()).toEqual(functions.map(([, fn]) => ref(fn.Properties.Role)).sort());
    expect(policy.Properties.PolicyDocument.Statement).toEqual([
      { Effect: 'Allow', Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], Resource: '*' },
    ]);
  });

  it('the new resources match the CloudFormation resource specification', () => {
    expect(specProblems(changed)).toEqual([]);
  });
});
