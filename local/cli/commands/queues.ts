import { DynamoRotationStore } from '../../../lib/distributor/stores/rotation-store';
import { DynamoTenantControlStore } from '../../../lib/distributor/stores/tenant-control-store';
import { ManagementClient } from '../../../lib/rabbitmq/management';
import { DynamoStagingRegistry } from '../../../lib/staging/staging-registry';
import { commandEnv } from '../../ops/deployment-env';
import { cliDocumentClient } from '../../ops/dynamo';
import { describeQueues, loadQueueSettings } from '../../ops/queues';
import { type Command, STAGE_USAGE } from '../command';
import { stagingCounts, stagingTableOf } from '../staging-counts';

export const queuesCommand: Command = {
  name: 'queues',
  summary:
    'targets and their staging queues: depths, free room, the shares the next pass would plan, how many were reaped',
  usage:
    'fairway queues [--stage S] [--json]\n' +
    '  Reads RABBITMQ_MANAGEMENT_URL and RABBITMQ_VHOST (one paged listing), DISTRIBUTOR_TABLE for the\n' +
    '  rotation and tenant controls, STAGING_TABLE for the reaped staging queues, and the DISTRIBUTOR_*\n' +
    '  settings, as the distributor does. Depths lag about 5 s.\n' +
    STAGE_USAGE,
  options: { stage: { type: 'string' } },
  async run({ options, env: shellEnv }) {
    const env = commandEnv(options.stage, shellEnv);
    const settings = loadQueueSettings(env);
    const management = new ManagementClient(settings.RABBITMQ_MANAGEMENT_URL, settings.RABBITMQ_VHOST);
    const doc = cliDocumentClient(settings, env);
    const stagingTable = stagingTableOf(env);
    try {
      const listing = await management.listQueues();
      const counts = await stagingCounts(
        listing,
        stagingTable === undefined ? undefined : new DynamoStagingRegistry(doc, stagingTable),
      );
      const view = await describeQueues(
        listing,
        settings,
        new DynamoRotationStore(doc, settings.DISTRIBUTOR_TABLE),
        await new DynamoTenantControlStore(doc, settings.DISTRIBUTOR_TABLE).read(),
      );
      const reaped = new Map(counts.byTarget.map((t) => [t.target, t.reaped]));
      return {
        data: { ...view, stagingCounts: counts },
        tables: [
          {
            title: `Targets: ${counts.stagingQueues} staging queues, ${stagingTable === undefined ? 'reaped: no STAGING_TABLE' : `${counts.reaped} reaped`}`,
            rows: view.targets.map((t) => ({ ...t, reaped: reaped.get(t.target) ?? 0 })),
            empty: 'no staging queues',
          },
          {
            title: 'Staging queues (nextShare: what the next pass would move)',
            rows: view.staging.map(({ queue, tenant, workflow, depth, weight, paused, nextShare }) => ({
              queue,
              tenant,
              workflow,
              depth,
              weight,
              paused,
              nextShare,
            })),
            empty: 'no staging queues',
          },
        ],
      };
    } finally {
      doc.destroy();
    }
  },
};
