import { loadRouterConfig } from '../lib/config/router';
import { routerHandler } from '../lib/routing/service';

export const handler = routerHandler(loadRouterConfig(process.env));
