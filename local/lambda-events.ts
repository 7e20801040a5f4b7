import { createHash, randomUUID } from 'node:crypto';
import type { Context, ScheduledEvent, SQSEvent } from 'aws-lambda';
import { messageGroupId } from './sqs/message-group';

/**
 * Events shaped like the ones AWS delivers (see test/fixtures: sqs-event.json,
 * scheduled-event.json), so that `npm start` and `fairway invoke` call the real handlers with
 * what they receive in production.
 */

const region = 'eu-west-1';
const account = '123456789012';

/** The body of an after-process event in Fairway's own format (docs/router.md), with a messageId of its own. */
export function afterProcessEvent(target: string, tenantId: string, workflowName: string | undefined, body: string) {
  return {
    target,
    tenantId,
    ...(workflowName ? { workflowName } : {}),
    message: { body, properties: { contentType: 'application/json', messageId: `${tenantId}-${randomUUID()}` } },
  };
}

/** An SQS event source batch from the after-process queue (a fair queue: each tenant's events in its group), one record per body. */
export function sqsEvent(bodies: readonly string[], queueName: string, now = new Date()): SQSEvent {
  return {
    Records: bodies.map((body) => {
      const group = messageGroupId(body);
      return {
        messageId: randomUUID(),
        receiptHandle: `local-${randomUUID()}`,
        body,
        attributes: {
          ApproximateReceiveCount: '1',
          SentTimestamp: String(now.getTime()),
          SenderId: 'AIDALOCALFAIRWAY',
          ApproximateFirstReceiveTimestamp: String(now.getTime()),
          ...(group === undefined ? {} : { MessageGroupId: group }),
        },
        messageAttributes: {},
        md5OfBody: createHash('md5').update(body).digest('hex'),
        eventSource: 'aws:sqs',
        eventSourceARN: `arn:aws:sqs:${region}:${account}:${queueName}`,
        awsRegion: region,
      };
    }),
  };
}

/** What an EventBridge schedule rule sends its target. */
export function scheduledEvent(ruleName: string, now = new Date()): ScheduledEvent {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account,
    time: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region,
    resources: [`arn:aws:events:${region}:${account}:rule/${ruleName}`],
    detail: {},
  };
}

/** The Lambda context of one invocation, enough for Powertools' logger context. */
export function lambdaContext(functionName: string, timeoutSeconds = 60): Context {
  const deadline = Date.now() + timeoutSeconds * 1000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${region}:${account}:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
