import type { EmbeddedDynamo } from '../../harness/dynamo';
import type { TestVhost } from '../../harness/rabbit';

/** The environment that points the operator CLI at an embedded DynamoDB and a test vhost. */
export const cliEnvironment = (dynamo: EmbeddedDynamo, vhost: TestVhost): Record<string, string> => ({
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'local',
  AWS_SECRET_ACCESS_KEY: 'local',
  DYNAMODB_ENDPOINT: dynamo.endpoint,
  TENANT_TABLE: 'TenantCountersTable',
  DISTRIBUTOR_TABLE: 'DistributorStateTable',
  CLEANUP_TABLE: 'CleanupStackTable',
  AMQP_URL: vhost.amqpUrl,
  RABBITMQ_MANAGEMENT_URL: vhost.managementUrl,
  RABBITMQ_VHOST: vhost.vhost,
});
