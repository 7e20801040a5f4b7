import type { ScheduledEvent } from 'aws-lambda';
import { documentClient } from '../lib/aws/dynamo';
import { createCleanupHandler } from '../lib/cleanup/handler';
import { cleanupJob, jobDatabases } from '../lib/cleanup/jobs';
import { loadCleanupConfig } from '../lib/config/cleanup';
import { lambdaHandler } from '../lib/runtime/lambda';

const config = loadCleanupConfig(process.env);
const core = createCleanupHandler(cleanupJob('repository-cleanup', process.env, jobDatabases(config)), config, { doc: documentClient(config) });

export const handler = lambdaHandler<ScheduledEvent, unknown>(core);
