import { distributorFunction } from '../lib/distributor/service';
import { lambdaFunction } from '../lib/secrets/lambda-function';

/** One distribution pass per invocation (SPEC §3), scheduled or requested. */
export const handler = lambdaFunction(distributorFunction);
