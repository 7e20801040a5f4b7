import type { ScheduledEvent } from 'aws-lambda';
import { loadDistributorConfig } from '../lib/config/distributor';
import { NotImplementedError } from '../lib/runtime/errors';
import { lambdaHandler } from '../lib/runtime/lambda';

loadDistributorConfig(process.env);

export const handler = lambdaHandler<ScheduledEvent, void>(async () => {
  throw new NotImplementedError('The distributor', 'issue #4');
});
