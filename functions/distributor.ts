import type { ScheduledEvent } from 'aws-lambda';
import { documentClient } from '../lib/aws/dynamo';
import { type DistributorConfig, loadDistributorConfig } from '../lib/config/distributor';
import { createDistributor, type PassSummary } from '../lib/distributor/pass';
import { reportPass } from '../lib/distributor/report';
import { DynamoDistributorState } from '../lib/distributor/stateStore';
import { AmqpSession } from '../lib/rabbitmq/connection';
import { ManagementClient } from '../lib/rabbitmq/management';
import { lambdaHandler } from '../lib/runtime/lambda';
import { logger, metrics } from '../lib/runtime/observability';
import { rabbitmqConnections } from '../lib/secrets/connections';
import { withSecrets } from '../lib/secrets/with-secrets';

/** The distributor of one container, built once from its configuration; `close` ends its connection. */
function distributorHandler(config: DistributorConfig) {
  const session = new AmqpSession(config.AMQP_URL);
  const management = new ManagementClient(config.RABBITMQ_MANAGEMENT_URL, config.RABBITMQ_VHOST);
  const dynamo = documentClient(config);

  const distributor = createDistributor({
    settings: config,
    listQueues: () => management.listQueues(),
    openChannel: () => session.openConfirmChannel(),
    state: new DynamoDistributorState(dynamo, config.DISTRIBUTOR_TABLE),
    warn: (message, details) => logger.warn(message, details),
  });

  // One distribution pass per scheduled invocation (SPEC §3).
  const handler = lambdaHandler<ScheduledEvent, PassSummary>({ logger, metrics }, async (_event, context) => {
    const summary = await distributor.runPass(context.getRemainingTimeInMillis());
    reportPass(summary, logger, metrics);
    return summary;
  });
  return Object.assign(handler, { close: () => session.close() });
}

export const handler = withSecrets(process.env, rabbitmqConnections, loadDistributorConfig, distributorHandler);
