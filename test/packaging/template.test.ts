import { DISTRIBUTOR_TUNING } from '../../lib/distributor/config';
import { documentedDeployParams, documentedGoLiveParams } from '../harness/documented-deploy';
import { specProblems } from './cfn-spec';
import { ofType, packageTemplate, ref, startableParams, type Template, takeTurnsPackaging } from './package';

takeTurnsPackaging();

/** The prod deployment docs/deploying.md shows, with every optional part switched on. */
const documentedProdParams = documentedDeployParams();

const slowCleanupRates = {
  registryTimebasedCleanupRate: 'rate(5 minutes)',
  registryStatus90CleanupRate: 'rate(2 hours)',
  repositoryCleanupRate: 'rate(1 day)',
};

const functionIds = [
  'DistributorLambdaFunction',
  'RegistryStatus90CleanupLambdaFunction',
  'RegistryTimebasedCleanupLambdaFunction',
  'RepositoryCleanupLambdaFunction',
  'RouterLambdaFunction',
];

describe('serverless package (offline, no AWS credentials)', () => {
  let dev: Template;
  let prod: Template;
  let prodDocumented: Template;
  /** The documented deploy with the flag docs/deploying.md gives to delete for real. */
  let prodLive: Template;
  /** dev with its cleanup schedules changed: the alarms counting schedules must follow. */
  let devSlowCleanup: Template;
  beforeAll(() => {
    dev = packageTemplate('dev', startableParams);
    prod = packageTemplate('prod', startableParams);
    prodDocumented = packageTemplate('prod', documentedProdParams);
    prodLive = packageTemplate('prod', { ...documentedProdParams, ...documentedGoLiveParams() });
    devSlowCleanup = packageTemplate('dev', { ...startableParams, ...slowCleanupRates });
  }, 240_000);

  it.each([
    ['DistributorLambdaFunction', 'rate(1 minute)'],
    ['RegistryTimebasedCleanupLambdaFunction', 'rate(1 minute)'],
    ['RegistryStatus90CleanupLambdaFunction', 'rate(1 minute)'],
    ['RepositoryCleanupLambdaFunction', 'rate(1 minute)'],
  ])('%s runs on an enabled EventBridge schedule of %s', (fn, rate) => {
    const rules = ofType(dev, 'AWS::Events::Rule').filter(([, r]) =>
      r.Properties.Targets.some((t: any) => ref(t.Arn) === fn),
    );
    expect(rules).toHaveLength(1);
    expect(rules[0]![1].Properties).toMatchObject({ ScheduleExpression: rate, State: 'ENABLED' });
  });

  it('every function runs on nodejs22.x with its handler bundled', () => {
    const functions = ofType(dev, 'AWS::Lambda::Function');
    expect(functions.map(([id]) => id).sort()).toEqual(functionIds);
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
    [
      'StagingQueuesTable',
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

  // Issue 38, item 1: the documented prod deploy deleted for real on its first run.
  it('every cleanup job dry-runs on every stage and in the documented deploy; the documented flag goes live', () => {
    const jobs = [
      'RegistryTimebasedCleanupLambdaFunction',
      'RegistryStatus90CleanupLambdaFunction',
      'RepositoryCleanupLambdaFunction',
    ];
    const dryRun = (t: Template) => jobs.map((id) => t.Resources[id]!.Properties.Environment.Variables.CLEANUP_DRY_RUN);
    for (const t of [dev, prod, prodDocumented]) expect(dryRun(t)).toEqual(['true', 'true', 'true']);
    expect(dryRun(prodLive)).toEqual(['false', 'false', 'false']);
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
      expect(alarms.length).toBeGreaterThan(8);
      for (const [, a] of alarms) notifiesTopic(a.Properties);
    });

    it('the distributor parked alarm fires on one parked message (issue 12, item 1)', () => {
      const props = firesAboveZero('DistributorParkedAlarm', 'Fairway/dev', 'MessagesParked', 'Sum');
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

    /** The seconds between two runs of `fn`'s schedule, read from its EventBridge rule. */
    const scheduleSeconds = (t: Template, fn: string) => {
      const [rule] = ofType(t, 'AWS::Events::Rule').filter(([, r]) =>
        r.Properties.Targets.some((target: any) => ref(target.Arn) === fn),
      );
      const [, count, unit] = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(rule![1].Properties.ScheduleExpression)!;
      return Number(count) * { minute: 60, hour: 3600, day: 86_400 }[unit as 'minute'];
    };

    it.each(jobs)(
      '%s: the errors alarm of job %s fires on three failed schedules in a row, whatever the rate',
      (id) => {
        for (const template of [dev, prod, devSlowCleanup]) {
          const props = template.Resources[`${id}ErrorsAlarm`]!.Properties;
          expect(props).toMatchObject({
            Namespace: 'AWS/Lambda',
            MetricName: 'Errors',
            Statistic: 'Sum',
            Threshold: 0,
            ComparisonOperator: 'GreaterThanThreshold',
            EvaluationPeriods: 3,
            DatapointsToAlarm: 3,
          });
          expect(props.AlarmDescription).toContain('three schedules in a row');
          const fn = ref(props.Dimensions[0].Value)!;
          expect(fn).toBe(`${id}LambdaFunction`);
          // One period per schedule: a longer one lets a job that fails most runs (but not one per
          // period) stay quiet; a shorter one fires before three schedules have failed.
          expect(props.Period).toBe(scheduleSeconds(template, fn));
        }
        expect(dev.Resources[`${id}ErrorsAlarm`]!.Properties.Period).toBe(60);
      },
    );

    it.each(jobs)('%s: one dead-lettered operation of job %s fires an alarm', (id, job) => {
      const props = firesAboveZero(`${id}DeadLetteredAlarm`, 'Fairway/dev', 'OperationsDeadLettered', 'Sum');
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
          expect(input.MetricStat.Metric.Namespace).toBe('Fairway/dev');
          expect(input.MetricStat.Metric.Dimensions).toContainEqual({ Name: 'job', Value: job });
        }
        const decision = props.Metrics.find((m: any) => m.ReturnData);
        expect(decision.Expression).toContain(`FILL(${inputs.OperationsExecuted.Id}, 0) == 0`);
        expect(props).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
        expect(props.EvaluationPeriods).toBeGreaterThan(1);
      },
    );

    it("the dashboard body is valid JSON with every placeholder bound, shows every alarm and searches the stage's namespace", () => {
      const dashboards = ofType(dev, 'AWS::CloudWatch::Dashboard');
      expect(dashboards).toHaveLength(1);
      const [body, variables] = dashboards[0]![1].Properties.DashboardBody['Fn::Sub'] as [
        string,
        Record<string, unknown>,
      ];
      const placeholders = [...body.matchAll(/\$\{([^}]+)\}/g)].map((m) => m[1]!);
      for (const name of placeholders) expect(name.startsWith('AWS::') || name in variables).toBe(true);
      const bound = body.replace(/\$\{(\w+)\}/g, (whole, name: string) => {
        const value = variables[name];
        return typeof value === 'string' ? value : whole;
      });

      const widgets = (JSON.parse(bound) as { widgets: any[] }).widgets;
      const alarmWidget = widgets.find((w) => w.type === 'alarm');
      const shown = (alarmWidget.properties.alarms as string[]).map((arn) => arn.split(':alarm:')[1]);
      expect(shown.sort()).toEqual(
        ofType(dev, 'AWS::CloudWatch::Alarm')
          .map(([, a]) => a.Properties.AlarmName)
          .sort(),
      );

      const searches = JSON.stringify(widgets).match(/SEARCH\('[^']*'/g) ?? [];
      expect(searches.length).toBeGreaterThan(0);
      for (const search of searches) expect(search).toContain('Namespace=\\"Fairway/dev\\"');
      const searched = searches.join(' ');
      for (const metric of [
        'Routed',
        'Rejected',
        'TargetMoved',
        'TargetCapacity',
        'TargetWaitP50',
        'TargetWaitP99',
        'TenantWaitMax',
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
      expect(rules.map(([id]) => id).sort()).toEqual([
        'DocumentsByTenantInsightRule',
        'StagedBacklogByTenantInsightRule',
        'StagingWaitsByTenantInsightRule',
      ]);
      const rule = JSON.parse(dev.Resources.DocumentsByTenantInsightRule!.Properties.RuleBody);
      expect(rule.LogGroupNames).toEqual([dev.Resources.RouterLogGroup!.Properties.LogGroupName]);
      expect(rule.Contribution.Keys).toEqual(['$.tenant']);
      for (const [, r] of rules) expect(r.Properties.RuleState).toBe('ENABLED');
    });

    it("a second rule ranks staging queues by wait from the distributor's 'Staging wait' lines (issue 25, item 3)", () => {
      const rule = JSON.parse(dev.Resources.StagingWaitsByTenantInsightRule!.Properties.RuleBody);
      expect(rule.LogGroupNames).toEqual([dev.Resources.DistributorLogGroup!.Properties.LogGroupName]);
      // The field names lib/wiring/distributor.ts logs (test/unit/distributor/report.test.ts reads them back).
      expect(rule.Contribution).toMatchObject({ Keys: ['$.stagingQueue'], ValueOf: '$.waitMs' });
      expect(rule.Contribution.Filters).toContainEqual({ Match: '$.message', In: ['Staging wait'] });
    });

    it("a third ranks tenants by staged backlog from the distributor's 'Tenant backlog' lines (issue 37, item 4)", () => {
      const rule = JSON.parse(dev.Resources.StagedBacklogByTenantInsightRule!.Properties.RuleBody);
      expect(rule.LogGroupNames).toEqual([dev.Resources.DistributorLogGroup!.Properties.LogGroupName]);
      // The field names lib/wiring/distributor.ts logs (test/unit/distributor/report.test.ts reads them back).
      expect(rule.Contribution).toMatchObject({ Keys: ['$.target', '$.tenant'], ValueOf: '$.staged' });
      expect(rule.Contribution.Filters).toContainEqual({ Match: '$.message', In: ['Tenant backlog'] });
    });

    it("the staging-wait alarm fires on one staging queue over the distributor's fixed bound, which it names", () => {
      const props = firesAboveZero('DistributorStagingWaitAlarm', 'Fairway/dev', 'StagingWaitsOverBound', 'Sum');
      expect(props.Dimensions).toEqual([{ Name: 'service', Value: 'fairway' }]);
      expect(props.AlarmDescription).toContain(`longer than ${DISTRIBUTOR_TUNING.waitAlarmSeconds} s.`);
    });
  });
  describe("stages apart: one stage never reads, names or alarms on another stage's metrics", () => {
    const customNamespaces = (t: Template) =>
      new Set(
        [
          ...ofType(t, 'AWS::CloudWatch::Alarm').flatMap(([, a]) => [
            a.Properties.Namespace,
            ...(a.Properties.Metrics ?? []).map((m: any) => m.MetricStat?.Metric.Namespace),
          ]),
          ...ofType(t, 'AWS::Logs::MetricFilter').flatMap(([, f]) =>
            f.Properties.MetricTransformations.map((m: any) => m.MetricNamespace),
          ),
          ...ofType(t, 'AWS::Lambda::Function').map(
            ([, fn]) => fn.Properties.Environment.Variables.POWERTOOLS_METRICS_NAMESPACE,
          ),
        ].filter((n) => n !== undefined && !String(n).startsWith('AWS/')),
      );
    const names = (t: Template) => [
      ...ofType(t, 'AWS::CloudWatch::Alarm').map(([, a]) => a.Properties.AlarmName as string),
      ...ofType(t, 'AWS::CloudWatch::Dashboard').map(([, d]) => d.Properties.DashboardName as string),
      ...ofType(t, 'AWS::CloudWatch::InsightRule').map(([, r]) => r.Properties.RuleName as string),
    ];

    it.each([
      ['dev', () => dev],
      ['prod', () => prod],
    ])('%s: functions emit, filters count and alarms watch only the stage namespace', (stage, template) => {
      expect([...customNamespaces(template())]).toEqual([`Fairway/${stage}`]);
    });

    it.each([
      ['dev', () => dev],
      ['prod', () => prod],
    ])('%s: every alarm, dashboard and insight rule is named for its stage', (stage, template) => {
      for (const name of names(template()))
        expect(name.startsWith(`fairway-${stage}-`) || name === `fairway-${stage}`).toBe(true);
    });

    it('both stages have the same alarms, under different names', () => {
      const kinds = (t: Template, stage: string) => names(t).map((n) => n.replace(`fairway-${stage}`, ''));
      expect(kinds(prod, 'prod').sort()).toEqual(kinds(dev, 'dev').sort());
      expect(names(prod).filter((n) => names(dev).includes(n))).toEqual([]);
    });
  });

  describe('alarms that would have fired', () => {
    const alarms = () => ofType(dev, 'AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
    const watching = (namespace: string, metric: string) =>
      alarms().filter((a) => a.Namespace === namespace && a.MetricName === metric);

    it.each(['Errors', 'Throttles'])('every function has a %s alarm above zero', (metric) => {
      const watched = watching('AWS/Lambda', metric).map((a) => {
        expect(a).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold', Statistic: 'Sum' });
        expect(a.Dimensions).toHaveLength(1);
        return ref(a.Dimensions[0].Value);
      });
      expect(watched.sort()).toEqual(functionIds);
    });

    it('a configuration failure at cold start in any function fires one alarm', () => {
      const filters = ofType(dev, 'AWS::Logs::MetricFilter').map(([, f]) => f.Properties);
      const logGroups = ofType(dev, 'AWS::Logs::LogGroup').map(([id]) => id);
      expect(filters.map((f) => ref(f.LogGroupName)).sort()).toEqual(logGroups.sort());
      for (const filter of filters) {
        // The text every ConfigError message starts with (lib/platform/errors.ts).
        expect(filter.FilterPattern).toBe('"Invalid configuration"');
        expect(filter.MetricTransformations).toEqual([
          expect.objectContaining({ MetricNamespace: 'Fairway/dev', MetricName: 'ConfigurationFailures' }),
        ]);
      }
      expect(watching('Fairway/dev', 'ConfigurationFailures')).toEqual([
        expect.objectContaining({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold', Dimensions: [] }),
      ]);
    });

    it('the after-process queue alarms when its oldest event waits longer than the stage allows', () => {
      const [alarm, ...others] = watching('AWS/SQS', 'ApproximateAgeOfOldestMessage');
      expect(others).toEqual([]);
      expect(ref(alarm!.Dimensions[0].Value)).toBe('AfterProcessQueue');
      expect(alarm).toMatchObject({ Statistic: 'Maximum', Threshold: 900, ComparisonOperator: 'GreaterThanThreshold' });
    });

    // Each metric the code emits (lib/routing/router.ts, lib/distributor/report.ts) with the service dimension Powertools adds.
    it.each(['BrokerFailures', 'TargetsFailed', 'TargetsMissing'])('%s above zero fires an alarm', (metric) => {
      const [alarm, ...others] = watching('Fairway/dev', metric);
      expect(others).toEqual([]);
      expect(alarm).toMatchObject({
        Statistic: 'Sum',
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        Dimensions: [{ Name: 'service', Value: 'fairway' }],
      });
    });

    it('an e-mail address subscribes to the alarm topic only when the stage gives one', () => {
      expect(dev.Conditions?.HasAlarmEmail).toEqual({ 'Fn::Not': [{ 'Fn::Equals': ['', ''] }] });
      expect(prodDocumented.Conditions?.HasAlarmEmail).toEqual({
        'Fn::Not': [{ 'Fn::Equals': [documentedProdParams.alarmEmail, ''] }],
      });
      const subscription = prodDocumented.Resources.AlarmEmailSubscription!;
      expect(subscription.Condition).toBe('HasAlarmEmail');
      expect(subscription.Properties).toMatchObject({ Protocol: 'email', Endpoint: documentedProdParams.alarmEmail });
      expect(ref(subscription.Properties.TopicArn)).toBe('AlarmTopic');
    });
  });

  describe('concurrency bounded on purpose', () => {
    it.each([
      ['dev', 10, () => dev],
      ['prod', 20, () => prod],
    ])('%s: the SQS event source runs at most %i routers, batch size and window from the stage', (_, max, template) => {
      const mapping = ofType(template(), 'AWS::Lambda::EventSourceMapping')[0]![1].Properties;
      expect(mapping).toMatchObject({
        ScalingConfig: { MaximumConcurrency: max },
        BatchSize: 100,
        MaximumBatchingWindowInSeconds: 1,
      });
      const router = template().Resources.RouterLambdaFunction!.Properties;
      expect(router.ReservedConcurrentExecutions).toBeGreaterThanOrEqual(max);
    });

    it('every function has a reserved concurrency', () => {
      for (const [, fn] of ofType(dev, 'AWS::Lambda::Function')) {
        expect(fn.Properties.ReservedConcurrentExecutions).toBeGreaterThanOrEqual(1);
      }
    });
  });

  describe('least privilege per function', () => {
    /** Every statement of the role, a conditional one (a secret the stage may name) as if its condition held. */
    const statements = (t: Template, role: string) =>
      t.Resources[role]!.Properties.Policies.flatMap((p: any) => p.PolicyDocument.Statement).map(
        (s: any) => s['Fn::If']?.[1] ?? s,
      );

    it('each function runs under a role of its own, and no shared role exists', () => {
      const roles = ofType(dev, 'AWS::Lambda::Function').map(([, fn]) => ref(fn.Properties.Role));
      expect(new Set(roles).size).toBe(functionIds.length);
      expect(
        ofType(dev, 'AWS::IAM::Role')
          .map(([id]) => id)
          .sort(),
      ).toEqual([...roles].sort());
    });

    it('no statement but the network interfaces\' (iam.test.ts) grants on "*", on an index, or a wildcard action', () => {
      for (const [role] of ofType(dev, 'AWS::IAM::Role')) {
        for (const statement of statements(dev, role)) {
          expect(statement.Effect).toBe('Allow');
          for (const action of [statement.Action].flat()) expect(action).not.toContain('*');
          const networkInterfaces = [statement.Action].flat().every((a: string) => a.startsWith('ec2:'));
          for (const resource of [statement.Resource].flat()) {
            if (!networkInterfaces) expect(resource).not.toBe('*');
            expect(JSON.stringify(resource)).not.toMatch(/index/);
          }
        }
      }
    });

    it.each([
      ['RouterRole', ['TenantCountersTable', 'StagingQueuesTable', 'AfterProcessQueue', 'DistributorStateTable']],
      ['DistributorRole', ['DistributorStateTable', 'StagingQueuesTable']],
      ['RegistryTimebasedCleanupRole', ['CleanupStackTable']],
      ['RegistryStatus90CleanupRole', ['CleanupStackTable']],
      ['RepositoryCleanupRole', ['CleanupStackTable']],
    ])('%s reaches only %s besides its own log group and secrets (secrets.test.ts)', (role, resources) => {
      const reached = statements(dev, role)
        .filter((s: any) => !/^(logs|secretsmanager|lambda|ec2):/.test(String(s.Action)))
        .flatMap((s: any) => [s.Resource].flat().map(ref));
      expect(reached.sort()).toEqual(resources.sort());
      const logs = statements(dev, role).find((s: any) => [s.Action].flat().includes('logs:PutLogEvents'));
      const fn = dev.Resources[role.replace(/Role$/, 'LambdaFunction')]!.Properties.FunctionName;
      expect(logs.Resource['Fn::Sub']).toMatch(new RegExp(`:log-group:/aws/lambda/${fn}:\\*$`));
    });

    it('only the router and the distributor may invoke a function, and only the distributor (passes on demand)', () => {
      const invokes = ofType(dev, 'AWS::IAM::Role').flatMap(([role]) =>
        statements(dev, role)
          .filter((s: any) => [s.Action].flat().some((a: string) => a.startsWith('lambda:')))
          .map((s: any) => [role, s.Action, s.Resource['Fn::Sub']]),
      );
      const distributor = dev.Resources.DistributorLambdaFunction!.Properties.FunctionName;
      expect(invokes.sort()).toEqual(
        ['DistributorRole', 'RouterRole'].map((role) => [
          role,
          'lambda:InvokeFunction',
          expect.stringMatching(new RegExp(`:function:${distributor}$`)),
        ]),
      );
    });

    it.each([
      ['RegistryTimebasedCleanupRole', 'registry-timebased-cleanup'],
      ['RegistryStatus90CleanupRole', 'registry-status90-cleanup'],
      ['RepositoryCleanupRole', 'repository-cleanup'],
    ])('%s touches only the %s partitions of the shared cleanup table', (role, job) => {
      const table = statements(dev, role).find((s: any) => ref(s.Resource) === 'CleanupStackTable');
      expect(table.Condition).toEqual({
        'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [job, `${job}#dead`] },
      });
    });
  });

  it.each([
    ['dev', () => dev],
    ['prod', () => prod],
    ['prod as documented', () => prodDocumented],
  ])('%s: every table is retained on removal or replacement and has point-in-time recovery', (_, template) => {
    const tables = ofType(template(), 'AWS::DynamoDB::Table');
    expect(tables).toHaveLength(4);
    for (const [, table] of tables) {
      expect(table).toMatchObject({ DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
      expect(table.Properties.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    }
  });

  describe('network', () => {
    it('without subnets the functions run outside a VPC and their roles get no network-interface grant', () => {
      expect(dev.Conditions?.InVpc).toEqual({ 'Fn::Not': [{ 'Fn::Equals': ['', ''] }] });
    });

    it('with subnets every function runs in them, with the security groups (its role: iam.test.ts)', () => {
      expect(prodDocumented.Conditions?.InVpc).toEqual({
        'Fn::Not': [{ 'Fn::Equals': [documentedProdParams.vpcSubnetIds, ''] }],
      });
      for (const [, fn] of ofType(prodDocumented, 'AWS::Lambda::Function')) {
        const [condition, inVpc] = fn.Properties.VpcConfig['Fn::If'];
        expect(condition).toBe('InVpc');
        expect(inVpc).toEqual({
          SubnetIds: { 'Fn::Split': [',', documentedProdParams.vpcSubnetIds] },
          SecurityGroupIds: { 'Fn::Split': [',', documentedProdParams.vpcSecurityGroupIds] },
        });
      }
    });
  });

  it.each([
    ['dev', () => dev],
    ['prod', () => prod],
    ['prod as documented', () => prodDocumented],
  ])('%s: the template matches the CloudFormation resource specification', (_, template) => {
    expect(specProblems(template())).toEqual([]);
  });
});
