import type { SQSMessageAttributes, SQSRecord } from 'aws-lambda';
import { z } from 'zod';
import { InvalidEventError } from '../platform/errors';
import { publishRefusals } from '../rabbitmq/publish-refusals';
import { checkDiscriminator, checkTargetName } from '../staging/staging-names';
import { headerTableProblems } from './amqp-limits';
import { parseOrReject } from './parse-or-reject';
import type { RoutableMessage } from './routable-message';

/**
 * A Worker Framework task message as the after-process event (shape 2 of event.ts), as documented
 * in test/fixtures/taskmessage-NOTES.md (sources in its SOURCES.md):
 *
 * - the SQS body is the TaskMessage v3 JSON (WorkerFramework worker-queue-sqs `WorkerPublisher`), and
 *   its SQS message attributes are the message's headers;
 * - the target is `to` (worker-framework `TaskMessage`);
 * - `taskData` is base64 of UTF-8 JSON (V4's JSON object was withdrawn in worker-framework 7.0.0);
 *   for a DocumentWorkerTask it holds `document.fields` and `customData` side by side
 *   (CAFDataProcessing worker-document), for a DocumentWorker task `fields` at the top;
 * - the tenant is `customData.tenantId` (absent or empty: a tenant-less message), the workflow the first string value of the field
 *   `CAF_WORKFLOW_NAME`, else `customData.workflowName` (the removed MessageRouter's tenant and
 *   workflow mutators, and worker-workflow's workflow-control.js); an empty workflow means none.
 *
 * The body published is the task message exactly as received.
 */

/**
 * Padded base64: whole quads of the alphabet, at most two `=` at the end. The length check and a
 * regex without groups say the same as the quad-by-quad pattern, at a third of its cost per event.
 */
export function isBase64(text: string): boolean {
  return text.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(text);
}

export function isTaskMessage(json: object): boolean {
  return 'taskData' in json && 'taskClassifier' in json;
}

const envelopeSchema = z.looseObject({
  version: z.number().int(),
  taskId: z.string(),
  taskClassifier: z.string(),
  taskApiVersion: z.number().int(),
  taskData: z.string().refine(isBase64, { error: 'must be base64' }),
  to: z.string(),
});

const fieldValues = z
  .array(z.looseObject({ data: z.unknown().optional(), encoding: z.string().nullish() }).nullable())
  .nullish();
const fields = z.record(z.string(), fieldValues).nullish();

const taskDataSchema = z.looseObject({
  document: z.looseObject({ fields }).nullish(),
  fields,
  customData: z.record(z.string(), z.string().nullable()).nullish(),
});

export function fromTaskMessage(json: object, record: Pick<SQSRecord, 'body' | 'messageAttributes'>): RoutableMessage {
  const envelope = parseOrReject(envelopeSchema, json);
  checkTargetName(envelope.to, 'to');
  const taskData = parseOrReject(taskDataSchema, decodeTaskData(envelope.taskData), 'taskData');

  // No tenant (absent, null or empty) is a tenant-less message, as upstream's tenant mutator skips it.
  const tenantId = taskData.customData?.tenantId || undefined;
  if (tenantId !== undefined) checkDiscriminator('taskData.customData.tenantId', tenantId);

  const workflow = workflowOf(taskData);
  if (workflow) checkDiscriminator(workflow.field, workflow.value);

  const headers = headersOf(record.messageAttributes ?? {});
  const problems = [
    ...headerTableProblems(headers, 'messageAttributes'),
    ...publishRefusals({ headers }).map(({ property, reason }) => ({
      field: `messageAttributes.${property.replace(/^headers\./, '')}`,
      reason,
    })),
  ];
  if (problems.length > 0) throw new InvalidEventError(problems);

  return {
    target: envelope.to,
    ...(tenantId === undefined ? {} : { tenantId }),
    ...(workflow ? { workflowName: workflow.value } : {}),
    body: Buffer.from(record.body, 'utf8'),
    // No empty table: amqplib makes each message's headers the prototype of a new object, which
    // costs V8 a prototype set-up per publish even for `{}`.
    properties: Object.keys(headers).length > 0 ? { deliveryMode: 2, headers } : { deliveryMode: 2 },
  };
}

function decodeTaskData(encoded: string): unknown {
  try {
    return JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'));
  } catch {
    throw new InvalidEventError('taskData', 'is not base64 of JSON');
  }
}

/** CAF_WORKFLOW_NAME's first string value (utf8, not a storage reference), else customData.workflowName. */
function workflowOf(taskData: z.infer<typeof taskDataSchema>): { field: string; value: string } | undefined {
  const inDocument = taskData.document?.fields != null;
  const values = (inDocument ? taskData.document?.fields : taskData.fields)?.CAF_WORKFLOW_NAME ?? [];
  const first = values.find((v) => v !== null && typeof v.data === 'string' && (v.encoding ?? 'utf8') === 'utf8');
  if (first && first.data !== '') {
    return { field: `taskData.${inDocument ? 'document.' : ''}fields.CAF_WORKFLOW_NAME`, value: first.data as string };
  }
  const fromCustomData = taskData.customData?.workflowName;
  return fromCustomData ? { field: 'taskData.customData.workflowName', value: fromCustomData } : undefined;
}

/** SQS message attributes back into AMQP headers, as worker-queue-sqs maps headers to attributes. */
function headersOf(attributes: SQSMessageAttributes): Record<string, string | Buffer> {
  return Object.fromEntries(
    Object.entries(attributes).flatMap(([name, attribute]): [string, string | Buffer][] => {
      if (attribute.dataType.startsWith('Binary') && attribute.binaryValue !== undefined) {
        return [[name, Buffer.from(attribute.binaryValue, 'base64')]];
      }
      return attribute.stringValue === undefined ? [] : [[name, attribute.stringValue]];
    }),
  );
}
