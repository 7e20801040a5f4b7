import type { SQSBatchItemFailure } from 'aws-lambda';
import { BatchFailedError, errorText, InvalidEventError } from '../platform/errors';

/** Why a record was not routed; bounded, so it can be a metric name. */
export type FailureKind = 'Rejected' | 'PriorityFailures' | 'BrokerFailures';

export const failureKinds: readonly FailureKind[] = ['Rejected', 'PriorityFailures', 'BrokerFailures'];

export interface RecordFailure {
  messageId: string;
  kind: FailureKind;
  /** The bad event fields, for a rejected event. */
  fields?: string[];
  /** The error as log text (`errorText`): type, message and causes. */
  reason: string;
}

export function failureOf(messageId: string, kind: FailureKind, error: unknown): RecordFailure {
  const fields = error instanceof InvalidEventError ? { fields: error.fields } : {};
  return { messageId, kind, ...fields, reason: errorText(error) };
}

/**
 * The batch's partial failures, one per SQS message: SQS delivers these again. SQS knows a message
 * by its id alone, so a message of which one record was routed is not reported failed for another
 * record that shares its id: SQS would deliver it again, and the routed record would be routed
 * again on every retry. The other record's failure is still logged.
 */
export function batchItemFailures(
  failures: readonly RecordFailure[],
  routedIds: ReadonlySet<string>,
): SQSBatchItemFailure[] {
  const failed = new Set(failures.map((f) => f.messageId).filter((id) => !routedIds.has(id)));
  return [...failed].map((itemIdentifier) => ({ itemIdentifier }));
}

/**
 * Every record failed, and not only because they were bad events: the broker or DynamoDB is
 * down. The invocation fails (Powertools Batch's full-batch failure), so that the Lambda error
 * metric, the alarms and the event source's back-off see it; SQS retries the whole batch either way.
 */
export function failWholeBatch(records: number, failures: readonly RecordFailure[]): void {
  const infrastructure = failures.filter((f) => f.kind !== 'Rejected');
  if (records === 0 || failures.length < records || infrastructure.length === 0) return;
  const kinds = [...new Set(infrastructure.map((f) => f.kind))].join(', ');
  throw new BatchFailedError(`${records} of ${records} records failed (${kinds}): ${infrastructure[0]!.reason}`);
}
