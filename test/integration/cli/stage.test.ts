import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoTenantCounterStore } from '../../../lib/routing/priority/counter-store';
import { defaultRules } from '../../../lib/routing/priority/rules';
import { runCli } from '../../../local/cli/cli';
import { stageEnvironment } from '../../../local/service';
import { type EmbeddedDynamo, startDynamo, tableDefinitions } from '../../harness/dynamo';
import { createTestVhost, type TestVhost } from '../../harness/rabbit';

const STAGE = 'opscheck';

/** The CLI's exit code and JSON answer (or its error), run in this process as `npx fairway …` would. */
async function fairwayJson(env: Record<string, string>, ...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli([...argv, '--json'], env, { out: (t) => (stdout += t), err: (t) => (stderr += t) });
  if (code !== 0) throw new Error(`fairway ${argv.join(' ')} exited ${code}: ${stderr}`);
  return JSON.parse(stdout);
}

/**
 * Issue 38, item 3: `tenants`, `queues` and `stack` took no `--stage`, so against AWS the table
 * names had to be exported by hand, while `doctor`, `setup` and `dlq` derive them from the stage.
 * Here the stage's tables exist under their deployed names and no table variable is set.
 */
describe('--stage gives tenants, queues and stack the stage’s table names', () => {
  let dynamo: EmbeddedDynamo;
  let vhost: TestVhost;
  let env: Record<string, string>;
  const deployed = stageEnvironment(STAGE);

  beforeAll(async () => {
    dynamo = await startDynamo();
    vhost = await createTestVhost();
    const nameOf: Record<string, string | undefined> = {
      TenantCountersTable: deployed.TENANT_TABLE,
      DistributorStateTable: deployed.DISTRIBUTOR_TABLE,
      StagingQueuesTable: deployed.STAGING_TABLE,
      CleanupStackTable: deployed.CLEANUP_TABLE,
    };
    for (const table of tableDefinitions())
      await dynamo.client.send(new CreateTableCommand({ ...table, TableName: nameOf[table.TableName!]! }));
    // No table variable: only the stage can name them.
    env = {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      DYNAMODB_ENDPOINT: dynamo.endpoint,
      RABBITMQ_MANAGEMENT_URL: vhost.managementUrl,
      RABBITMQ_VHOST: vhost.vhost,
    };
  });
  afterAll(async () => {
    await Promise.all([dynamo?.stop(), vhost?.delete()]);
  });

  it('the stage names every table as infra/dynamodb.yml deploys it', () => {
    expect(deployed.TENANT_TABLE).toBe(`fairway-${STAGE}-tenant-counters`);
    expect(deployed.STAGING_TABLE).toBe(`fairway-${STAGE}-staging-queues`);
  });

  it('tenants --stage lists the counters of the stage’s table', async () => {
    await new DynamoTenantCounterStore(dynamo.doc, deployed.TENANT_TABLE!, defaultRules).check('acme', 3, Date.now());
    const { tenants } = await fairwayJson(env, 'tenants', '--stage', STAGE);
    expect(tenants.map((t: { tenant: string }) => t.tenant)).toEqual(['acme']);
  });

  it('stack --stage reads the stage’s cleanup stacks', async () => {
    const { jobs } = await fairwayJson(env, 'stack', '--stage', STAGE);
    expect(jobs.map((j: { size: number }) => j.size)).toEqual([0, 0, 0]);
  });

  it('queues --stage reads the stage’s distributor and staging-queue tables', async () => {
    const { stagingCounts } = await fairwayJson(env, 'queues', '--stage', STAGE);
    expect(stagingCounts).toMatchObject({ stagingQueues: 0, reaped: 0 });
  });

  it('FAIRWAY_STAGE does the same without the option', async () => {
    const { tenants } = await fairwayJson({ ...env, FAIRWAY_STAGE: STAGE }, 'tenants');
    expect(tenants.map((t: { tenant: string }) => t.tenant)).toEqual(['acme']);
  });
});
