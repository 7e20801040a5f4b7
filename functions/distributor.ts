import type { ScheduledEvent } from 'aws-lambda';
import { loadDistributorConfig } from '../lib/config/distributor';
import type { PassSummary } from '../lib/distributor/distributor';
import { createDistributorService } from '../lib/distributor/service';
import { lambdaHandler } from '../lib/runtime/lambda';

const distributor = createDistributorService(loadDistributorConfig(process.env));

/** One distribution pass per scheduled invocation (SPEC §3). */
export const handler = lambdaHandler<ScheduledEvent, PassSummary>(distributor.observability, (_event, context) =>
  distributor.runPass(context.getRemainingTimeInMillis()),
);
