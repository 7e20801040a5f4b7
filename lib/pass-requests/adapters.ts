import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { PassRequestConfig } from '../config/common';
import { LambdaPassTrigger } from './lambda-pass-trigger';
import { DynamoLeaseStore } from './lease-store';
import type { PassTrigger } from './pass-trigger';
import { passRequester, type RequestPass, schedulesOnly } from './requester';

/**
 * The pass-request adapters the router's and the distributor's composition roots build from the
 * shared pass-request settings (lib/config/common.ts), so both ask for passes the same way.
 */

/**
 * How a function asks for passes: through the lease items of the distributor's table and an async
 * invoke of the distributor function (or the given trigger); on the schedule alone when neither is set.
 */
export function passRequests(
  config: PassRequestConfig,
  doc: DynamoDBDocumentClient,
  trigger: PassTrigger | undefined,
): RequestPass {
  if (trigger === undefined || config.DISTRIBUTOR_TABLE === undefined) return schedulesOnly;
  const leases = new DynamoLeaseStore(doc, config.DISTRIBUTOR_TABLE);
  return passRequester({ leases, trigger, graceMs: config.DISTRIBUTOR_REQUEST_GRACE_MS });
}

/** The async invoke of the distributor function, if one is configured. */
export function lambdaPassTrigger(config: PassRequestConfig): LambdaPassTrigger | undefined {
  if (config.DISTRIBUTOR_FUNCTION_NAME === undefined) return undefined;
  return new LambdaPassTrigger(config.DISTRIBUTOR_FUNCTION_NAME, {
    region: config.AWS_REGION,
    endpoint: config.LAMBDA_ENDPOINT,
  });
}
