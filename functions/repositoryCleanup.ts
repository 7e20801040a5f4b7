import type { ScheduledEvent } from 'aws-lambda';
import { loadCleanupConfig } from '../lib/config/cleanup';
import { NotImplementedError } from '../lib/runtime/errors';
import { lambdaHandler } from '../lib/runtime/lambda';

loadCleanupConfig(process.env);

export const handler = lambdaHandler<ScheduledEvent, void>(async () => {
  throw new NotImplementedError('The repositoryCleanup job', 'issues #5 and #6');
});
