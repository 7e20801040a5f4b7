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
      env: { ...process.env, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', AWS_PROFILE: '', SLS_TELEMETRY_DISABLED: '1' },
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
        expect(JSON.stringify(resource)).toMatch(/TenantCountersTable|DistributorStateTable|CleanupStackTable|AfterProcessQueue/);
      }
    }
  });

  it('cleanup deletes for real only on a stage that says so', () => {
    const dryRun = (t: Template) =>
      t.Resources.RegistryTimebasedCleanupLambdaFunction!.Properties.Environment.Variables.CLEANUP_DRY_RUN;
    expect([dryRun(dev), dryRun(prod)]).toEqual(['true', 'false']);
  });
});
