import type { SQSRecord } from 'aws-lambda';
import type { StagingDestination } from '../staging/staging-names';
import { type FailureKind, failureOf, type RecordFailure } from './record-failures';
import type { RoutableMessage } from './routable-message';

/** A record on its way through the batch's steps. */
export interface Pending {
  record: SQSRecord;
  message: RoutableMessage;
  /** Where the message is published: its staging queue, or its target when that bypasses staging. */
  destination: string;
  /** Published to the target itself: a bypassing target, or no discriminator (or none that fits) to stage by. */
  bypass: boolean;
  shortened?: StagingDestination['shortened'];
  priorityLevel?: number;
  amqpPriority?: number;
}

/** The records a step could not take further, with the kind and cause of each failure. */
export type Failed = Map<Pending, { kind: FailureKind; error: unknown }>;

/** The records that go on to the next step; the failed ones are added to `failures`. */
export function dropFailed(pending: Pending[], failed: Failed, failures: RecordFailure[]): Pending[] {
  for (const [item, { kind, error }] of failed) failures.push(failureOf(item.record.messageId, kind, error));
  return pending.filter((item) => !failed.has(item));
}

/** The items of each tenant, in batch order; tenant-less items are in no group. */
export function byTenant(items: readonly Pending[]): Map<string, Pending[]> {
  const groups = new Map<string, Pending[]>();
  for (const item of items) {
    const tenant = item.message.tenantId;
    if (tenant === undefined) continue;
    const group = groups.get(tenant);
    if (group) group.push(item);
    else groups.set(tenant, [item]);
  }
  return groups;
}
