import { loadDistributorConfig } from '../lib/config/distributor';
import { distributorHandler } from '../lib/distributor/service';
import { rabbitmqConnections } from '../lib/secrets/connections';
import { withSecrets } from '../lib/secrets/with-secrets';

export const handler = withSecrets(process.env, rabbitmqConnections, loadDistributorConfig, distributorHandler);
