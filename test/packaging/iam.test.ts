import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { passRequestSettingsOf } from '../../lib/settings/common';
import { passRequests } from '../../lib/work-board/adapters';
import { documentedDeployParams } from '../harness/documented-deploy';
import { type EmbeddedDynamo, startDynamo } from '../harness/dynamo';
import { ofType, packageTemplate, ref, root, type Template, takeTurnsPackaging } from './package';

takeTurnsPackaging();

/**
 * Issue 23, item 8: each role may do what its function does and no more. In a VPC a role gets the
 * network-interface actions Lambda needs, not AWS's managed policy (whose logs:* on "*" would let
 * any function write into the cleanup jobs' audit log groups); the router reaches only the lease
 * items of the distributor table; docs/deploying.md's table says exactly what the template grants.
 */
const networkInterfaceActions = [
  'ec2:AssignPrivateIpAddresses',
  'ec2:CreateNetworkInterface',
  'ec2:DeleteNetworkInterface',
  'ec2:DescribeNetworkInterfaces',
  'ec2:UnassignPrivateIpAddresses',
];

/** A role's statements, each with the condition (if any) under which the stack includes it. */
function statements(template: Template, role: string): { statement: any; when?: string }[] {
  return template.Resources[role]!.Properties.Policies.flatMap((p: any) => p.PolicyDocument.Statement).map((s: any) =>
    s['Fn::If'] ? { statement: s['Fn::If'][1], when: s['Fn::If'][0] } : { statement: s },
  );
}

const actionsOf = (statement: any): string[] => [statement.Action].flat().sort();
const roles = (template: Template) => ofType(template, 'AWS::IAM::Role').map(([id]) => id);

let documented: Template;
beforeAll(() => {
  documented = packageTemplate('prod', documentedDeployParams());
}, 120_000);

describe('in a VPC', () => {
  it('no role has a managed policy: each gets the five network-interface actions, only when in a VPC', () => {
    for (const role of roles(documented)) {
      expect(documented.Resources[role]!.Properties.ManagedPolicyArns).toBeUndefined();
      const ec2 = statements(documented, role).filter(({ statement }) =>
        actionsOf(statement).some((a) => a.startsWith('ec2:')),
      );
      expect(ec2).toEqual([
        { when: 'InVpc', statement: { Effect: 'Allow', Action: expect.any(Array), Resource: '*' } },
      ]);
      expect(actionsOf(ec2[0]!.statement)).toEqual(networkInterfaceActions);
    }
  });

  it("no role may write logs anywhere but its own function's log group", () => {
    for (const role of roles(documented)) {
      const logs = statements(documented, role).filter(({ statement }) =>
        actionsOf(statement).some((a) => a.startsWith('logs:')),
      );
      const fn = documented.Resources[role.replace(/Role$/, 'LambdaFunction')]!.Properties.FunctionName;
      expect(logs).toHaveLength(1);
      expect(actionsOf(logs[0]!.statement)).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
      expect(logs[0]!.statement.Resource['Fn::Sub']).toMatch(new RegExp(`:log-group:/aws/lambda/${fn}:\\*$`));
    }
  });
});

describe("the router's grant on the distributor table", () => {
  const grant = () =>
    statements(documented, 'RouterRole').find(({ statement }) => ref(statement.Resource) === 'DistributorStateTable')!
      .statement;

  it('is limited to items whose key the router writes (dynamodb:LeadingKeys)', () => {
    expect(grant().Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['work-board'] } });
  });

  describe('covers every call the router makes when it asks for passes (real calls on dynalite)', () => {
    let dynamo: EmbeddedDynamo;
    const calls: { action: string; key: string }[] = [];
    const actionOf: Record<string, string> = {
      GetCommand: 'dynamodb:GetItem',
      PutCommand: 'dynamodb:PutItem',
      UpdateCommand: 'dynamodb:UpdateItem',
      DeleteCommand: 'dynamodb:DeleteItem',
      QueryCommand: 'dynamodb:Query',
    };
    beforeAll(async () => {
      dynamo = await startDynamo();
      await dynamo.createTables();
    });
    afterAll(() => dynamo?.stop());

    /** The document client, recording the action and partition key of every call. */
    function recording(doc: DynamoDBDocumentClient): DynamoDBDocumentClient {
      return new Proxy(doc, {
        get: (target, property) =>
          property === 'send'
            ? (command: any) => {
                calls.push({
                  action: actionOf[command.constructor.name] ?? command.constructor.name,
                  key: command.input.Key?.pk,
                });
                return target.send(command);
              }
            : Reflect.get(target, property),
      });
    }

    it('start, pending, a failed start withdrawn', async () => {
      const config = {
        AWS_REGION: 'us-east-1',
        DISTRIBUTOR_TABLE: 'DistributorStateTable',
        DISTRIBUTOR_FUNCTION_NAME: 'fairway-prod-distributor',
      };
      const doc = recording(dynamo.doc);
      const started = passRequests(passRequestSettingsOf(config), doc, { start: async () => undefined });
      expect(await started(['orders', 'invoices'])).toBe('started');
      expect(await started(['orders'])).toBe('queued');
      const failing = passRequests(passRequestSettingsOf(config), doc, {
        start: async () => {
          throw new Error('Lambda unreachable');
        },
      });
      await dynamo.doc.send(
        new UpdateCommand({
          TableName: 'DistributorStateTable',
          Key: { pk: 'work-board' },
          UpdateExpression: 'REMOVE starting',
        }),
      );
      await expect(failing(['invoices'])).rejects.toThrow('Lambda unreachable');

      expect(new Set(calls.map((c) => c.action))).toEqual(new Set(['dynamodb:UpdateItem']));
      const patterns = grant().Condition['ForAllValues:StringLike']['dynamodb:LeadingKeys'].map(
        (glob: string) => new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`),
      );
      for (const call of calls) {
        expect(actionsOf(grant())).toContain(call.action);
        expect(patterns.some((p: RegExp) => p.test(call.key))).toBe(true);
      }
    });
  });
});

/**
 * docs/deploying.md "Least privilege": one row per statement (`| role | actions | on |`, the role
 * named on its first row), whose "on" cell must name what the statement reaches and its condition.
 */
describe('docs/deploying.md lists exactly what each role may do', () => {
  /** What the "on" cell must say for `statement` (each a substring of it). */
  function mustSay(statement: any, when: string | undefined): string[] {
    const labels: Record<string, string> = {
      TenantCountersTable: 'tenant-counters table',
      DistributorStateTable: 'distributor-state table',
      CleanupStackTable: 'cleanup-stack table',
      StagingQueuesTable: 'staging-queues table',
      AfterProcessQueue: 'after-process queue',
    };
    const resource = statement.Resource;
    const sub = String(resource?.['Fn::Sub'] ?? '');
    const said =
      resource === '*'
        ? ['`*`']
        : sub.includes(':log-group:')
          ? ['its own log group']
          : sub.includes(':function:')
            ? ['the distributor function']
            : typeof resource === 'string'
              ? ['secret']
              : [labels[ref(resource)!] ?? `(unlabelled ${ref(resource)})`];
    const keys = Object.values<any>(statement.Condition ?? {}).flatMap((c) => c['dynamodb:LeadingKeys'] ?? []);
    const param =
      when === 'InVpc' ? 'a VPC' : when?.replace(/^Has(\w)(\w*)$/, (_, a, b) => `\`${a.toLowerCase()}${b}Arn\``);
    return [...said, ...keys.map((k: string) => `\`${k}\``), ...(param ? [param] : [])];
  }

  function documentedRows(): { role: string; actions: string[]; on: string }[] {
    const doc = readFileSync(join(root, 'docs/deploying.md'), 'utf8');
    const section = doc.slice(
      doc.indexOf('## Least privilege'),
      doc.indexOf('\n## ', doc.indexOf('## Least privilege') + 1),
    );
    let role = '';
    return section
      .split('\n')
      .filter((line) => /^\|.*`\w+:\w+`/.test(line))
      .map((line) => {
        const [first, actions, on] = line
          .split('|')
          .slice(1, -1)
          .map((cell) => cell.trim());
        role = /`(\w+Role)`/.exec(first!)?.[1] ?? role;
        return { role, actions: [...actions!.matchAll(/`(\w+:\w+)`/g)].map((m) => m[1]!).sort(), on: on! };
      });
  }

  it('one row per statement, with its actions and what it reaches', () => {
    const rows = documentedRows();
    const expected = roles(documented).flatMap((role) =>
      statements(documented, role).map(({ statement, when }) => ({
        role,
        actions: actionsOf(statement),
        mustSay: mustSay(statement, when),
      })),
    );
    const problems: string[] = [];
    for (const want of expected) {
      const row = rows.find(
        (r) =>
          r.role === want.role &&
          JSON.stringify(r.actions) === JSON.stringify(want.actions) &&
          want.mustSay.every((s) => r.on.includes(s)),
      );
      if (!row) problems.push(`missing: ${want.role} ${want.actions.join(', ')} on ${want.mustSay.join(' + ')}`);
    }
    for (const row of rows) {
      const matched = expected.some(
        (want) =>
          want.role === row.role &&
          JSON.stringify(row.actions) === JSON.stringify(want.actions) &&
          want.mustSay.every((s) => row.on.includes(s)),
      );
      if (!matched) problems.push(`not in the template: ${row.role} ${row.actions.join(', ')} on ${row.on}`);
    }
    expect(problems).toEqual([]);
    expect(rows).toHaveLength(expected.length);
  });
});
