import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { loadRouterConfig } from '../lib/config/router';
import { NotImplementedError } from '../lib/runtime/errors';
import { lambdaHandler } from '../lib/runtime/lambda';

loadRouterConfig(process.env);

export const handler = lambdaHandler<SQSEvent, SQSBatchResponse>(async () => {
  throw new NotImplementedError('The router', 'issue #3');
});
