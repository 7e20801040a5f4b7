import { ofType, packageTemplate, ref, startableParams, type Template, takeTurnsPackaging } from './package';

takeTurnsPackaging();

/**
 * Issue 38, item 4: how an invocation ends. Lambda retried a failed asynchronous invocation twice
 * and then dropped it in silence; nothing alarmed on an invocation nearing its timeout.
 */
const asyncFunctions = [
  'DistributorLambdaFunction',
  'RegistryTimebasedCleanupLambdaFunction',
  'RegistryStatus90CleanupLambdaFunction',
  'RepositoryCleanupLambdaFunction',
];

describe('invocations (packaged dev stage, a cleanup timeout of 100 s)', () => {
  let dev: Template;
  beforeAll(() => {
    dev = packageTemplate('dev', { ...startableParams, cleanupTimeoutSeconds: '100' });
  }, 240_000);

  const alarms = () => ofType(dev, 'AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
  const onFunction = (fn: string) => (a: Record<string, any>) =>
    a.Namespace === 'AWS/Lambda' && a.Dimensions?.length === 1 && ref(a.Dimensions[0].Value) === fn;

  it.each(asyncFunctions)('%s is not retried by Lambda after a failure', (fn) => {
    const configs = ofType(dev, 'AWS::Lambda::EventInvokeConfig').filter(
      ([, c]) => ref(c.Properties.FunctionName) === fn,
    );
    expect(configs).toHaveLength(1);
    expect(configs[0]![1].Properties).toMatchObject({ MaximumRetryAttempts: 0, Qualifier: '$LATEST' });
  });

  it('the router, invoked by its SQS event source, has no asynchronous invoke config', () => {
    const functions = ofType(dev, 'AWS::Lambda::EventInvokeConfig').map(([, c]) => ref(c.Properties.FunctionName));
    expect(functions.sort()).toEqual([...asyncFunctions].sort());
  });

  it('a dropped distributor invocation is alarmed on, to the alarm topic', () => {
    const dropped = alarms().filter(
      (a) => onFunction('DistributorLambdaFunction')(a) && a.MetricName === 'AsyncEventsDropped',
    );
    expect(dropped).toHaveLength(1);
    expect(dropped[0]).toMatchObject({ Statistic: 'Sum', Threshold: 0, ComparisonOperator: 'GreaterThanThreshold' });
    expect(dropped[0]!.AlarmActions.map(ref)).toEqual(['AlarmTopic']);
  });

  it.each([
    ['RouterLambdaFunction', 27_000],
    ['DistributorLambdaFunction', 54_000],
    ['RegistryTimebasedCleanupLambdaFunction', 90_000],
    ['RegistryStatus90CleanupLambdaFunction', 90_000],
    ['RepositoryCleanupLambdaFunction', 90_000],
  ])('%s has a duration alarm at 90 %% of its timeout (%i ms)', (fn, threshold) => {
    expect(dev.Resources[fn]!.Properties.Timeout * 900).toBe(threshold);
    const near = alarms().filter((a) => onFunction(fn)(a) && a.MetricName === 'Duration');
    expect(near).toHaveLength(1);
    expect(near[0]).toMatchObject({
      Statistic: 'Maximum',
      Threshold: threshold,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    expect(near[0]!.AlarmActions.map(ref)).toEqual(['AlarmTopic']);
  });
});
