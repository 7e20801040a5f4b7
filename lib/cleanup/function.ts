import type { ScheduledEvent } from 'aws-lambda';
import { documentClient } from '../aws/dynamo';
import { loadCleanupConfig } from '../config/cleanup';
import type { Env } from '../config/env';
import { lambdaHandler } from '../runtime/lambda';
import { logger, metrics } from '../runtime/observability';
import { createCleanupHandler } from './handler';
import { type CleanupJobName, cleanupJob, jobDatabases } from './jobs';

/**
 * The Lambda handler of one cleanup job: its configuration read and validated now (cold start),
 * its database pools and DynamoDB client built once, one stack step per scheduled invocation.
 */
export function cleanupFunction(name: CleanupJobName, env: Env = process.env) {
  const config = loadCleanupConfig(env);
  const core = createCleanupHandler(cleanupJob(name, env, jobDatabases(config)), config, {
    doc: documentClient(config),
  });
  return lambdaHandler<ScheduledEvent, unknown>({ logger, metrics }, core);
}
