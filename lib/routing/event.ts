import type { SQSRecord } from 'aws-lambda';
import { z } from 'zod';
import { InvalidEventError } from '../platform/errors';
import { checkDiscriminator, checkTargetName } from '../staging/staging-names';
import { propertiesSchema } from './message-properties';
import { parseOrReject } from './parse-or-reject';
import type { RoutableMessage } from './routable-message';
import { fromTaskMessage, isBase64, isTaskMessage } from './task-message';

/**
 * The after-process event (the SQS message body the router consumes), in one of two shapes:
 *
 * 1. Fairway's own, described by `afterProcessEventSchema` below (docs/router.md);
 * 2. a Worker Framework task message (`lib/routing/task-message.ts`), recognised by `taskData` and `taskClassifier`.
 */

export const afterProcessEventSchema = z.strictObject({
  /** The queue the worker would have sent the message to. */
  target: z.string(),
  /** Absent or empty: a tenant-less message (ROUTER_MISSING_TENANT). */
  tenantId: z.string().optional(),
  /** Absent or empty: no workflow. */
  workflowName: z.string().optional(),
  message: z.strictObject({
    body: z.string(),
    /** `utf8` (default) or `base64` for a binary body. */
    encoding: z.enum(['utf8', 'base64']).default('utf8'),
    properties: propertiesSchema.default({}),
  }),
});

export type AfterProcessEvent = z.input<typeof afterProcessEventSchema>;

/** Validates one SQS record's body; throws InvalidEventError naming each bad field. */
export function parseAfterProcessRecord(record: Pick<SQSRecord, 'body' | 'messageAttributes'>): RoutableMessage {
  let json: unknown;
  try {
    json = JSON.parse(record.body);
  } catch {
    throw new InvalidEventError('body', 'is not JSON');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new InvalidEventError('body', 'must be a JSON object');
  }
  return isTaskMessage(json) ? fromTaskMessage(json, record) : fromFairwayEvent(json);
}

function fromFairwayEvent(json: object): RoutableMessage {
  const event = parseOrReject(afterProcessEventSchema, json);
  if (event.message.encoding === 'base64' && !isBase64(event.message.body)) {
    throw new InvalidEventError('message.body', 'is not valid base64');
  }
  checkTargetName(event.target);
  // An empty id means none, as in a task message (upstream's mutators skip an empty one).
  const tenantId = event.tenantId || undefined;
  const workflowName = event.workflowName || undefined;
  if (tenantId !== undefined) checkDiscriminator('tenantId', tenantId);
  if (workflowName !== undefined) checkDiscriminator('workflowName', workflowName);
  const { priority: _replaced, ...properties } = event.message.properties;
  return {
    target: event.target,
    ...(tenantId === undefined ? {} : { tenantId }),
    ...(workflowName === undefined ? {} : { workflowName }),
    body: Buffer.from(event.message.body, event.message.encoding),
    properties: { deliveryMode: 2, ...properties },
  };
}
