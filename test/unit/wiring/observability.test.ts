import { createObservability } from '../../../lib/wiring/lambda-function';

const namespaceOf = () => {
  const { metrics } = createObservability('test');
  metrics.addMetric('Probe', 'Count', 1);
  return (metrics.serializeMetrics() as { _aws: { CloudWatchMetrics: { Namespace: string }[] } })._aws
    .CloudWatchMetrics[0]!.Namespace;
};

// serverless.yml sets POWERTOOLS_METRICS_NAMESPACE per stage; the stage's alarms watch that namespace.
describe('metrics namespace', () => {
  const saved = process.env.POWERTOOLS_METRICS_NAMESPACE;
  afterEach(() => {
    if (saved === undefined) delete process.env.POWERTOOLS_METRICS_NAMESPACE;
    else process.env.POWERTOOLS_METRICS_NAMESPACE = saved;
  });

  it("is the stage's when the environment names one", () => {
    process.env.POWERTOOLS_METRICS_NAMESPACE = 'Fairway/prod';
    expect(namespaceOf()).toBe('Fairway/prod');
  });

  it('is Fairway locally', () => {
    delete process.env.POWERTOOLS_METRICS_NAMESPACE;
    expect(namespaceOf()).toBe('Fairway');
  });
});
