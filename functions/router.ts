import { routerFunction } from '../lib/routing/service';
import { lambdaFunction } from '../lib/secrets/lambda-function';

/** The router (SPEC §1–2): SQS batches of after-process events into per-tenant staging queues. */
export const handler = lambdaFunction(routerFunction);
