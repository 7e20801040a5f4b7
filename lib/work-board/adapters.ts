import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { PassRequestSettings, PassTrigger } from './pass-trigger';
import { type RequestWork, schedulesOnly, workRequester } from './requester';
import { DynamoWorkBoard } from './work-board-store';

// The pass-request adapters the router's and the distributor's composition roots build from the
// same settings, so both ask for passes the same way.

/**
 * How a function asks for passes: through the work board of the distributor's table and an async
 * invoke of the distributor function (or the given trigger); on the schedule alone when neither is set.
 */
export function passRequests(
  settings: PassRequestSettings,
  doc: DynamoDBDocumentClient,
  trigger: PassTrigger | undefined,
): RequestWork {
  if (trigger === undefined || settings.table === undefined) return schedulesOnly;
  return workRequester({ board: new DynamoWorkBoard(doc, settings.table), trigger, graceMs: settings.graceMs });
}
