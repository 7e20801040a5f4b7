import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { loadRouterConfig } from '../lib/config/router';
import { createRouterService } from '../lib/routing/service';
import { lambdaHandler } from '../lib/runtime/lambda';
import { logger, metrics } from '../lib/runtime/observability';

const router = createRouterService(loadRouterConfig(process.env));

export const handler = lambdaHandler<SQSEvent, SQSBatchResponse>({ logger, metrics }, router.route);
