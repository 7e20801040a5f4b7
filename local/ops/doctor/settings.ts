import { cleanupJobNames } from '../../../lib/cleanup/jobs';
import { loadCleanupFunctionConfig } from '../../../lib/cleanup/service';
import { loadDistributorConfig } from '../../../lib/config/distributor';
import type { Env } from '../../../lib/config/env';
import { loadRouterConfig } from '../../../lib/config/router';
import { ConfigError, errorText } from '../../../lib/errors';
import { checkConnections, databaseConnections, rabbitmqConnections } from '../../../lib/secrets/connections';
import { type Check, fail, ok } from './check';

/**
 * Each function's configuration as its cold start reads it (the same loaders, the same connection
 * rules), from the doctor's environment. A function whose configuration fails is named with every
 * problem; the live checks that need it are then skipped.
 */
export function loadConfigurations(env: Env) {
  const checks: Check[] = [];
  const load = <C>(name: string, connections: typeof rabbitmqConnections, loader: () => C): C | undefined => {
    try {
      checkConnections(env, connections);
      const config = loader();
      checks.push(ok(`configuration: ${name}`, 'every setting valid'));
      return config;
    } catch (error) {
      const problems = error instanceof ConfigError ? error.problems.join('; ') : errorText(error);
      checks.push(fail(`configuration: ${name}`, `${problems}. Fix these settings (docs/configuration.md).`));
      return undefined;
    }
  };
  const router = load('router', rabbitmqConnections, () => loadRouterConfig(env));
  const distributor = load('distributor', rabbitmqConnections, () => loadDistributorConfig(env));
  const jobs = cleanupJobNames.flatMap((job) => {
    const config = load(job, databaseConnections, () => loadCleanupFunctionConfig(job, env));
    return config ? [config] : [];
  });
  return { checks, router, distributor, jobs };
}
