import { DynamoRotationStore } from '../../../lib/distributor/stores/rotation-store';
import { DynamoTenantControlStore } from '../../../lib/distributor/stores/tenant-control-store';
import { ManagementClient } from '../../../lib/rabbitmq/management';
import { cliDocumentClient } from '../../ops/dynamo';
import { describeQueues, loadQueueSettings } from '../../ops/queues';
import type { Command } from '../command';

export const queuesCommand: Command = {
  name: 'queues',
  summary: 'targets and their staging queues: depths, free room, the shares the next pass would plan',
  usage:
    'fairway queues [--json]\n' +
    '  Reads RABBITMQ_MANAGEMENT_URL and RABBITMQ_VHOST (one paged listing), DISTRIBUTOR_TABLE for the\n' +
    '  rotation and tenant controls, and the DISTRIBUTOR_* settings, as the distributor does. Depths lag about 5 s.',
  options: {},
  async run({ env }) {
    const settings = loadQueueSettings(env);
    const management = new ManagementClient(settings.RABBITMQ_MANAGEMENT_URL, settings.RABBITMQ_VHOST);
    const doc = cliDocumentClient(settings, env);
    try {
      const view = await describeQueues(
        await management.listQueues(),
        settings,
        new DynamoRotationStore(doc, settings.DISTRIBUTOR_TABLE),
        await new DynamoTenantControlStore(doc, settings.DISTRIBUTOR_TABLE).read(),
      );
      return {
        data: view,
        tables: [
          { title: 'Targets', rows: view.targets.map((t) => ({ ...t })), empty: 'no staging queues' },
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
