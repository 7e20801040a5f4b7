import { cleanupJobNames } from '../../../lib/cleanup/jobs';
import { loadDistributorConfig } from '../../../lib/distributor/config';
import type { Env } from '../../../lib/platform/config';
import { ConfigError, errorText } from '../../../lib/platform/errors';
import { databaseConnections, rabbitmqConnections } from '../../../lib/platform/secrets';
import { loadRouterConfig } from '../../../lib/routing/config';
import { loadCleanupFunctionConfig } from '../../../lib/wiring/cleanup';
import { loadAtColdStart } from '../../../lib/wiring/lambda-function';
import { type Check, fail, ok } from './check';

/**
 * Each function's configuration as its cold start reads it (the same variable-name, connection and
 * configuration checks: lib/wiring/lambda-function.ts), from the doctor's environment. A function whose configuration fails is named with every
 * problem; the live checks that need it are then skipped.
 */
export function loadConfigurations(env: Env) {
  const checks: Check[] = [];
  const load = <C>(name: string, connections: typeof rabbitmqConnections, loader: (env: Env) => C): C | undefined => {
    try {
      const config = loadAtColdStart(env, connections, loader);
      checks.push(ok(`configuration: ${name}`, 'every setting valid'));
      return config;
    } catch (error) {
      const problems = error instanceof ConfigError ? error.problems.join('; ') : errorText(error);
      checks.push(fail(`configuration: ${name}`, `${problems}. Fix these settings (docs/configuration.md).`));
      return undefined;
    }
  };
  const router = load('router', rabbitmqConnections, loadRouterConfig);
  const distributor = load('distributor', rabbitmqConnections, loadDistributorConfig);
  const jobs = cleanupJobNames.flatMap((job) => {
    const config = load(job, databaseConnections, (jobEnv) => loadCleanupFunctionConfig(job, jobEnv));
    return config ? [config] : [];
  });
  return { checks, router, distributor, jobs };
}
