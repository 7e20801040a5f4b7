import { lambdaFunction } from '../lib/wiring/lambda-function';
import { routerFunction } from '../lib/wiring/router';

/** The router (SPEC §1–2): SQS batches of after-process events into per-tenant staging queues. */
export const handler = lambdaFunction(routerFunction);
