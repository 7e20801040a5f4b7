import { loadDistributorConfig } from '../../lib/config/distributor';
import { createDistributor, type Distributor } from '../../lib/distributor/pass';
import { DynamoDistributorState } from '../../lib/distributor/stateStore';
import { AmqpSession } from '../../lib/rabbitmq/connection';
import { ManagementClient } from '../../lib/rabbitmq/management';
import type { BenchDynamo } from './hops';
import type { BenchVhost } from './services';

/** The deployed distributor's timeout (serverless.yml): what a pass gets as its remaining time. */
export const DISTRIBUTOR_TIMEOUT_MS = 60_000;

/**
 * A distributor as a Lambda container builds it, on the bench's vhost and DynamoDB (through their
 * delay proxies), with the default settings but for `settings`.
 */
export function benchDistributor(
  vhost: BenchVhost,
  dynamo: BenchDynamo,
  settings: Record<string, string>,
  progress: (line: string) => void,
): Distributor & { close(): Promise<void> } {
  const config = loadDistributorConfig({
    AMQP_URL: vhost.amqpUrl,
    RABBITMQ_MANAGEMENT_URL: vhost.managementUrl,
    RABBITMQ_VHOST: vhost.vhost,
    DISTRIBUTOR_TABLE: 'DistributorStateTable',
    ...settings,
  });
  const session = new AmqpSession(vhost.amqpUrl);
  const management = new ManagementClient(vhost.managementUrl, vhost.vhost);
  const distributor = createDistributor({
    settings: config,
    listQueues: () => management.listQueues(),
    openChannel: () => session.openConfirmChannel(),
    state: new DynamoDistributorState(dynamo.doc, 'DistributorStateTable'),
    warn: (message, details) => progress(`distributor warned: ${message} ${JSON.stringify(details)}`),
  });
  return { runPass: (remainingMs) => distributor.runPass(remainingMs), close: () => session.close() };
}
