import type { ScheduledEvent } from 'aws-lambda';
import { documentClient } from '../aws/dynamo';
import { loadCleanupConfig } from '../config/cleanup';
import type { Env } from '../config/env';
import { lambdaHandler } from '../runtime/lambda';
import { logger, metrics } from '../runtime/observability';
import { databaseConnections } from '../secrets/connections';
import { withSecrets } from '../secrets/with-secrets';
import { createCleanupHandler } from './handler';
import { type CleanupJobName, cleanupJob, jobDatabases } from './jobs';

/**
 * The Lambda handler of one cleanup job: its configuration read and validated now (cold start),
 * its database pools (with the credentials of their secrets, lib/secrets) and DynamoDB client
 * built once, one stack step per scheduled invocation.
 */
export function cleanupFunction(name: CleanupJobName, env: Env = process.env) {
  // pg connects lazily: the pools built here only to check the job's settings never connect.
  const load = (e: Env) => {
    const config = loadCleanupConfig(e);
    const databases = jobDatabases(config);
    return { config, databases, job: cleanupJob(name, e, databases) };
  };
  return withSecrets(env, databaseConnections, load, ({ config, databases, job }) =>
    Object.assign(
      lambdaHandler<ScheduledEvent, unknown>(
        { logger, metrics },
        createCleanupHandler(job, config, { doc: documentClient(config) }),
      ),
      { close: async () => void (await Promise.all([databases.nxrg.end(), databases.openxds.end()])) },
    ),
  );
}
