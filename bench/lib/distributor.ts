import { type DistributorConfig, type DistributorTuning, loadDistributorConfig } from '../../lib/distributor/config';
import { createDistributorService, warningReport } from '../../lib/wiring/distributor';
import type { BenchVhost } from './services';

/** The deployed distributor's timeout (serverless.yml): what a pass gets as its remaining time. */
export const DISTRIBUTOR_TIMEOUT_MS = 60_000;

/**
 * A pass that moves every staged message into the room, as on a throughput-only target: no target
 * buffer (it keeps a target at a drain these benches' workers do not make, and starts shallow on a
 * target without a rate) and no quiet reserve (quiet tenants first would keep 5 % of the room empty).
 */
export const WHOLE_BACKLOG_PASS = { DISTRIBUTOR_BUFFER_HORIZON_MS: '0', DISTRIBUTOR_MOVE_PRIORITY: 'keep' };

/** The distributor's configuration on a bench vhost and DynamoDB endpoint: the defaults but for `settings` and `tuning`. */
export function benchDistributorConfig(
  vhost: BenchVhost,
  dynamoEndpoint: string,
  settings: Record<string, string> = {},
  tuning: Partial<DistributorTuning> = {},
): DistributorConfig {
  return loadDistributorConfig(
    {
      AMQP_URL: vhost.amqpUrl,
      RABBITMQ_MANAGEMENT_URL: vhost.managementUrl,
      RABBITMQ_VHOST: vhost.vhost,
      DISTRIBUTOR_TABLE: 'DistributorStateTable',
      DYNAMODB_ENDPOINT: dynamoEndpoint,
      ...settings,
    },
    tuning,
  );
}

/** The distributor's own service on a bench vhost and embedded DynamoDB; its warnings go to the progress lines. */
export function benchDistributor(config: DistributorConfig, progress: (line: string) => void, fetchFn?: typeof fetch) {
  process.env.AWS_ACCESS_KEY_ID ??= 'local'; // dynalite accepts any credentials; the SDK wants some
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
  const report = warningReport((message, details) =>
    progress(`distributor warned: ${message} ${JSON.stringify(details)}`),
  );
  return createDistributorService(config, report, { fetch: fetchFn });
}
