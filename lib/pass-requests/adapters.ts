import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { LambdaPassTrigger } from './lambda-pass-trigger';
import { DynamoLeaseStore } from './lease-store';
import type { PassTrigger } from './pass-trigger';
import { passRequester, type RequestPass, schedulesOnly } from './requester';
import type { PassRequestSettings } from './settings';

// The pass-request adapters the router's and the distributor's composition roots build from the
// same settings, so both ask for passes the same way.

/**
 * How a function asks for passes: through the lease items of the distributor's table and an async
 * invoke of the distributor function (or the given trigger); on the schedule alone when neither is set.
 */
export function passRequests(
  settings: PassRequestSettings,
  doc: DynamoDBDocumentClient,
  trigger: PassTrigger | undefined,
): RequestPass {
  if (trigger === undefined || settings.table === undefined) return schedulesOnly;
  const leases = new DynamoLeaseStore(doc, settings.table);
  return passRequester({ leases, trigger, graceMs: settings.graceMs });
}

/** The async invoke of the distributor function, if one is configured. */
export function lambdaPassTrigger(settings: PassRequestSettings): LambdaPassTrigger | undefined {
  if (settings.functionName === undefined) return undefined;
  return new LambdaPassTrigger(settings.functionName, { region: settings.region, endpoint: settings.lambdaEndpoint });
}
