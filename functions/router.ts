import { loadRouterConfig } from '../lib/config/router';
import { routerHandler } from '../lib/routing/service';
import { rabbitmqConnections } from '../lib/secrets/connections';
import { withSecrets } from '../lib/secrets/with-secrets';

export const handler = withSecrets(process.env, rabbitmqConnections, loadRouterConfig, routerHandler);
