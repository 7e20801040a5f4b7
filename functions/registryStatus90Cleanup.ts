import { cleanupFunction } from '../lib/wiring/cleanup';
import { lambdaFunction } from '../lib/wiring/lambda-function';

/** One step of the registry-status90-cleanup job per scheduled invocation (SPEC §4). */
export const handler = lambdaFunction(cleanupFunction('registry-status90-cleanup'));
