import { cleanupFunction } from '../lib/cleanup/service';
import { lambdaFunction } from '../lib/secrets/lambda-function';

/** One step of the registry-timebased-cleanup job per scheduled invocation (SPEC §4). */
export const handler = lambdaFunction(cleanupFunction('registry-timebased-cleanup'));
