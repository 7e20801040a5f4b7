import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: unknown };
type Template = { Resources: Record<string, Resource> };

/** Packages the service offline, as `npx serverless package` would, and returns its CloudFormation template. */
function packageTemplate(stage: string): Template {
  const dir = mkdtempSync(join(tmpdir(), `fairway-${stage}-`));
  try {
    execFileSync('npx', ['serverless', 'package', '--stage', stage, '--package', dir], {
      cwd: join(__dirname, '../..'),
      env: {
        ...process.env,
        AWS_ACCESS_KEY_ID: '',
        AWS_SECRET_ACCESS_KEY: '',
        AWS_PROFILE: '',
        SLS_TELEMETRY_DISABLED: '1',
      },
      stdio: 'pipe',
    });
    return JSON.parse(readFileSync(join(dir, 'cloudformation-template-update-stack.json'), 'utf8')) as Template;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const ofType = (template: Template, type: string) =>
  Object.entries(template.Resources).filter(([, r]) => r.Type === type);

const ref = (value: any): string | undefined => value?.['Fn::GetAtt']?.[0] ?? value?.Ref;

describe('serverless package (offline, no AWS credentials)', () => {
  let dev: Template;
  let prod: Template;
  beforeAll(() => {
    dev = packageTemplate('dev');
    prod = packageTemplate('prod');
  }, 180_000);

  it.each([
    ['DistributorLambdaFunction', 'rate(1 minute)'],
    ['RegistryTimebasedCleanupLambdaFunction', 'rate(5 minutes)'],
    ['RegistryStatus90CleanupLambdaFunction', 'rate(5 minutes)'],
    ['RepositoryCleanupLambdaFunction', 'rate(5 minutes)'],
  ])('%s runs on an enabled EventBridge schedule of %s', (fn, rate) => {
    const rules = ofType(dev, 'AWS::Events::Rule').filter(([, r]) =>
      r.Properties.Targets.some((t: any) => ref(t.Arn) === fn),
    );
    expect(rules).toHaveLength(1);
    expect(rules[0]![1].Properties).toMatchObject({ ScheduleExpression: rate, State: 'ENABLED' });
  });

  it('every function runs on nodejs22.x with its handler bundled', () => {
    const functions = ofType(dev, 'AWS::Lambda::Function');
    expect(functions.map(([id]) => id).sort()).toEqual([
      'DistributorLambdaFunction',
      'RegistryStatus90CleanupLambdaFunction',
      'RegistryTimebasedCleanupLambdaFunction',
      'RepositoryCleanupLambdaFunction',
      'RouterLambdaFunction',
    ]);
    for (const [, fn] of functions) expect(fn.Properties.Runtime).toBe('nodejs22.x');
  });

  it('the router consumes the after-process queue with partial batch responses, and that queue has a DLQ', () => {
    const mappings = ofType(dev, 'AWS::Lambda::EventSourceMapping');
    expect(mappings).toHaveLength(1);
    const mapping = mappings[0]![1].Properties;
    expect(ref(mapping.FunctionName)).toBe('RouterLambdaFunction');
    expect(ref(mapping.EventSourceArn)).toBe('AfterProcessQueue');
    expect(mapping.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);

    const queue = dev.Resources.AfterProcessQueue!.Properties;
    expect(ref(queue.RedrivePolicy.deadLetterTargetArn)).toBe('AfterProcessDeadLetterQueue');
    expect(queue.RedrivePolicy.maxReceiveCount).toBeGreaterThan(1);
    expect(dev.Resources.AfterProcessDeadLetterQueue!.Type).toBe('AWS::SQS::Queue');
  });

  it.each([
    ['TenantCountersTable', [{ AttributeName: 'pk', KeyType: 'HASH' }]],
    ['DistributorStateTable', [{ AttributeName: 'pk', KeyType: 'HASH' }]],
    [
      'CleanupStackTable',
      [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
    ],
  ])('table %s has its keys and reaches the functions by name', (table, keys) => {
    expect(dev.Resources[table]!.Properties.KeySchema).toEqual(keys);
    const names = ofType(dev, 'AWS::Lambda::Function').flatMap(([, fn]) =>
      Object.values(fn.Properties.Environment.Variables).map(ref),
    );
    expect(names).toContain(table);
  });

  it('no IAM statement grants DynamoDB or SQS on "*"', () => {
    const statements = ofType(dev, 'AWS::IAM::Role').flatMap(([, role]) =>
      role.Properties.Policies.flatMap((p: any) => p.PolicyDocument.Statement),
    );
    const scoped = statements.filter((s: any) =>
      [s.Action].flat().some((a: string) => a.startsWith('dynamodb:') || a.startsWith('sqs:')),
    );
    expect(scoped.length).toBeGreaterThanOrEqual(2);
    for (const statement of scoped) {
      for (const resource of [statement.Resource].flat()) {
        expect(resource).not.toBe('*');
        expect(JSON.stringify(resource)).toMatch(
          /TenantCountersTable|DistributorStateTable|CleanupStackTable|AfterProcessQueue/,
        );
      }
    }
  });

  it('cleanup deletes for real only on a stage that says so', () => {
    const dryRun = (t: Template) =>
      t.Resources.RegistryTimebasedCleanupLambdaFunction!.Properties.Environment.Variables.CLEANUP_DRY_RUN;
    expect([dryRun(dev), dryRun(prod)]).toEqual(['true', 'false']);
  });
  describe('CloudWatch: alarms to one topic, a dashboard, per-tenant figures from logs', () => {
    const alarm = (id: string) => {
      const resource = dev.Resources[id];
      expect(resource?.Type).toBe('AWS::CloudWatch::Alarm');
      return resource!.Properties;
    };
    const notifiesTopic = (props: Record<string, any>) =>
      expect((props.AlarmActions as unknown[]).map(ref)).toEqual(['AlarmTopic']);
    /** An alarm that fires as soon as `Statistic` of the metric is above zero in a period. */
    const firesAboveZero = (id: string, Namespace: string, MetricName: string, Statistic: string) => {
      const props = alarm(id);
      expect(props).toMatchObject({
        Namespace,
        MetricName,
        Statistic,
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
      });
      return props;
    };

    it('alarms go to an SNS topic the stack outputs', () => {
      expect(dev.Resources.AlarmTopic!.Type).toBe('AWS::SNS::Topic');
      const alarms = ofType(dev, 'AWS::CloudWatch::Alarm');
      expect(alarms).toHaveLength(9);
      for (const [, a] of alarms) notifiesTopic(a.Properties);
    });

    it('the distributor parked alarm fires on one parked message (issue 12, item 1)', () => {
      const props = firesAboveZero('DistributorParkedAlarm', 'Fairway', 'MessagesParked', 'Sum');
      expect(props.Dimensions).toEqual([{ Name: 'service', Value: 'fairway' }]);
    });

    it('the router DLQ alarm fires on one visible message in the after-process DLQ', () => {
      const props = firesAboveZero(
        'RouterDeadLetterQueueAlarm',
        'AWS/SQS',
        'ApproximateNumberOfMessagesVisible',
        'Maximum',
      );
      expect(props.Dimensions).toHaveLength(1);
      expect(props.Dimensions[0].Name).toBe('QueueName');
      expect(ref(props.Dimensions[0].Value)).toBe('AfterProcessDeadLetterQueue');
    });

    it('the distributor alarm fires on Lambda errors of the distributor function in consecutive periods', () => {
      const props = firesAboveZero('DistributorFailingAlarm', 'AWS/Lambda', 'Errors', 'Sum');
      expect(props.EvaluationPeriods).toBeGreaterThan(1);
      expect(props.DatapointsToAlarm).toBe(props.EvaluationPeriods);
      expect(ref(props.Dimensions[0].Value)).toBe('DistributorLambdaFunction');
    });

    const jobs = [
      ['RegistryTimebasedCleanup', 'registry-timebased-cleanup'],
      ['RegistryStatus90Cleanup', 'registry-status90-cleanup'],
      ['RepositoryCleanup', 'repository-cleanup'],
    ];

    it.each(jobs)('%s: one dead-lettered operation of job %s fires an alarm', (id, job) => {
      const props = firesAboveZero(`${id}DeadLetteredAlarm`, 'Fairway', 'OperationsDeadLettered', 'Sum');
      expect(props.Dimensions).toContainEqual({ Name: 'job', Value: job });
    });

    it.each(jobs)(
      '%s: a stack of job %s that stops shrinking (steps run, nothing completes) fires an alarm',
      (id, job) => {
        const props = alarm(`${id}StackStuckAlarm`);
        const inputs = Object.fromEntries(
          props.Metrics.filter((m: any) => m.MetricStat).map((m: any) => [m.MetricStat.Metric.MetricName, m]),
        );
        expect(Object.keys(inputs).sort()).toEqual([
          'LeasesLost',
          'OperationsExecuted',
          'OperationsFailed',
          'StepsBusy',
        ]);
        for (const input of Object.values<any>(inputs)) {
          expect(input.MetricStat.Metric.Namespace).toBe('Fairway');
          expect(input.MetricStat.Metric.Dimensions).toContainEqual({ Name: 'job', Value: job });
        }
        const decision = props.Metrics.find((m: any) => m.ReturnData);
        expect(decision.Expression).toContain(`FILL(${inputs.OperationsExecuted.Id}, 0) == 0`);
        expect(props).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
        expect(props.EvaluationPeriods).toBeGreaterThan(1);
      },
    );

    it('the dashboard body is valid JSON with every placeholder bound, shows every alarm and searches namespace Fairway', () => {
      const dashboards = ofType(dev, 'AWS::CloudWatch::Dashboard');
      expect(dashboards).toHaveLength(1);
      const [body, variables] = dashboards[0]![1].Properties.DashboardBody['Fn::Sub'] as [
        string,
        Record<string, unknown>,
      ];
      const placeholders = [...body.matchAll(/\$\{([^}]+)\}/g)].map((m) => m[1]!);
      for (const name of placeholders) expect(name.startsWith('AWS::') || name in variables).toBe(true);

      const widgets = (JSON.parse(body) as { widgets: any[] }).widgets;
      const alarmWidget = widgets.find((w) => w.type === 'alarm');
      const alarmArns = (alarmWidget.properties.alarms as string[]).map((a) => ref(variables[a.slice(2, -1)]));
      expect(alarmArns.sort()).toEqual(
        ofType(dev, 'AWS::CloudWatch::Alarm')
          .map(([id]) => id)
          .sort(),
      );

      const searched = JSON.stringify(widgets)
        .match(/MetricName=\\"(\w+)\\"/g)
        ?.join(' ');
      for (const metric of [
        'Routed',
        'Rejected',
        'TargetMoved',
        'TargetCapacity',
        'OperationsExecuted',
        'DocumentsDeleted',
        'OperationsDeadLettered',
      ]) {
        expect(searched).toContain(metric);
      }
      const insight = widgets.find((w) => w.properties.insightRule);
      expect(ref(variables[insight.properties.insightRule.ruleName.slice(2, -1)])).toBe('DocumentsByTenantInsightRule');
    });

    it('a Contributor Insights rule ranks tenants from the router log group, not one metric per tenant', () => {
      const rules = ofType(dev, 'AWS::CloudWatch::InsightRule');
      expect(rules).toHaveLength(1);
      const rule = JSON.parse(rules[0]![1].Properties.RuleBody);
      expect(rule.LogGroupNames).toEqual([dev.Resources.RouterLogGroup!.Properties.LogGroupName]);
      expect(rule.Contribution.Keys).toEqual(['$.tenant']);
      expect(rules[0]![1].Properties.RuleState).toBe('ENABLED');
    });
  });
});
