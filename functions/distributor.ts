import { distributorFunction } from '../lib/wiring/distributor';
import { lambdaFunction } from '../lib/wiring/lambda-function';

/** One distributor execution per invocation (docs/distributor.md "Run model"): passes (SPEC §3) over every target with work. */
export const handler = lambdaFunction(distributorFunction);
