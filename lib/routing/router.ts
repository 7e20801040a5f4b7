import type { ConfirmChannel } from 'amqplib';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { errorText, InvalidEventError } from '../errors';
import type { TenantCounterStore } from '../priority/counter-store';
import type { PriorityMapping } from '../priority/rules';
import { parseAfterProcessRecord, type RoutableMessage } from './event';
import { publishAll } from './publish';
import { defaultMutators, type QueueNameMutator, stagingQueueName } from './queue-names';
import type { StagingQueues, StagingQueuesReport, TargetSettings } from './staging-queues';

/** Why a record was not routed; bounded, so it can be a metric name. */
export type FailureKind = 'Rejected' | 'PriorityFailures' | 'BrokerFailures';

export interface RecordFailure {
  messageId: string;
  kind: FailureKind;
  /** The bad event fields, for a rejected event. */
  fields?: string[];
  /** The error as log text (`errorText`): type, message and causes. */
  reason: string;
}

/** What one batch routed for one tenant: the per-tenant figures live in logs, never in metric dimensions. */
export interface TenantRouted {
  tenant: string;
  documents: number;
  /**
   * The tenant's priority level after its last check in the batch (1 = highest). Not `level`:
   * Powertools reserves that log key for the log level and drops it.
   */
  priorityLevel: number;
}

/** Where the router reports; never given a message body. */
export interface RouterReport extends StagingQueuesReport {
  failed(failure: RecordFailure): void;
  counted(metric: 'Routed' | FailureKind, count: number): void;
  tenantRouted(routed: TenantRouted): void;
}

export interface RouterDeps {
  counters: TenantCounterStore;
  amqp: { sharedConfirmChannel(): Promise<ConfirmChannel> };
  stagingQueues: StagingQueues;
  targets: Readonly<Record<string, TargetSettings>>;
  priorityOf: PriorityMapping;
  confirmTimeoutMs: number;
  report: RouterReport;
  mutators?: readonly QueueNameMutator[];
  now?: () => number;
}

interface Pending {
  record: SQSRecord;
  message: RoutableMessage;
  /** Where the message is published: its staging queue, or its target when that bypasses staging. */
  destination: string;
  bypass: boolean;
  priorityLevel?: number;
  amqpPriority?: number;
}

/**
 * The router (SPEC §2) over an SQS batch of after-process events: validate each, check its
 * tenant's priority (SPEC §1), publish it to its staging queue (or its target, for a target that
 * bypasses staging) with that priority. A record fails alone, in `batchItemFailures`, and is
 * never reported routed unless the broker confirmed it.
 */
export function createRouter(deps: RouterDeps) {
  const mutators = deps.mutators ?? defaultMutators;
  const now = deps.now ?? Date.now;

  return async function route(event: SQSEvent): Promise<SQSBatchResponse> {
    const failures: RecordFailure[] = [];

    let pending = event.Records.flatMap((record): Pending[] => {
      try {
        const message = parseAfterProcessRecord(record);
        const bypass = deps.targets[message.target]?.bypassStaging ?? false;
        const destination = bypass ? message.target : stagingQueueName(message, mutators);
        return [{ record, message, bypass, destination }];
      } catch (error) {
        failures.push(failureOf(record.messageId, 'Rejected', error));
        return [];
      }
    });

    const routed: Pending[] = [];
    let channel: ConfirmChannel | undefined;
    if (pending.length > 0) {
      try {
        // Before the priority checks, so that a broker that is down does not count documents twice.
        channel = await deps.amqp.sharedConfirmChannel();
      } catch (error) {
        pending = dropFailed(pending, new Map(pending.map((p) => [p, { kind: 'BrokerFailures', error }])), failures);
      }
    }
    // The shared channel is kept for the next invocation unless this one leaves its state in doubt.
    let channelInDoubt = true;
    try {
      pending = dropFailed(pending, await ensureStagingQueues(deps.stagingQueues, pending), failures);
      pending = dropFailed(pending, await checkPriorities(deps, pending, now()), failures);
      if (channel && pending.length > 0) {
        const outcomes = await publishAll(
          channel,
          pending.map(({ destination, message, amqpPriority }) => ({
            queue: destination,
            body: message.body,
            options: { ...message.properties, priority: amqpPriority },
          })),
          deps.confirmTimeoutMs,
        );
        outcomes.forEach((outcome, i) => {
          if (outcome.routed) {
            routed.push(pending[i]!);
          } else {
            deps.stagingQueues.forget(pending[i]!.destination);
            failures.push(failureOf(pending[i]!.record.messageId, 'BrokerFailures', outcome.error));
          }
        });
        // Confirms still owed would arrive during the next invocation's publishes.
        channelInDoubt = outcomes.some((outcome) => !outcome.routed && outcome.unconfirmed);
      } else {
        channelInDoubt = false;
      }
    } finally {
      if (channelInDoubt) await channel?.close().catch(() => undefined);
    }

    for (const failure of failures) deps.report.failed(failure);
    for (const [tenant, items] of byTenant(routed)) {
      deps.report.tenantRouted({ tenant, documents: items.length, priorityLevel: items.at(-1)!.priorityLevel! });
    }
    deps.report.counted('Routed', routed.length);
    for (const kind of ['Rejected', 'PriorityFailures', 'BrokerFailures'] as const) {
      deps.report.counted(kind, failures.filter((f) => f.kind === kind).length);
    }
    return { batchItemFailures: failures.map((f) => ({ itemIdentifier: f.messageId })) };
  };
}

/** The records a step could not take further, with the kind and cause of each failure. */
type Failed = Map<Pending, { kind: FailureKind; error: unknown }>;

function dropFailed(pending: Pending[], failed: Failed, failures: RecordFailure[]): Pending[] {
  for (const [item, { kind, error }] of failed) failures.push(failureOf(item.record.messageId, kind, error));
  return pending.filter((item) => !failed.has(item));
}

async function ensureStagingQueues(stagingQueues: StagingQueues, pending: Pending[]): Promise<Failed> {
  const failed: Failed = new Map();
  const staged = pending.filter((p) => !p.bypass);
  const targetOf = [...new Map(staged.map((p) => [p.destination, p.message.target])).entries()];
  const results = await Promise.allSettled(targetOf.map(([staging, target]) => stagingQueues.ensure(staging, target)));
  results.forEach((result, i) => {
    if (result.status === 'fulfilled') return;
    const kind = result.reason instanceof InvalidEventError ? 'Rejected' : 'BrokerFailures';
    for (const item of staged) {
      if (item.destination === targetOf[i]![0]) failed.set(item, { kind, error: result.reason });
    }
  });
  return failed;
}

/** The k events of one tenant are k checks in batch order, in one write; tenants run in parallel. */
async function checkPriorities(deps: RouterDeps, pending: Pending[], nowMs: number): Promise<Failed> {
  const failed: Failed = new Map();
  await Promise.all(
    [...byTenant(pending)].map(async ([tenantId, items]) => {
      try {
        const { levels } = await deps.counters.check(tenantId, items.length, nowMs);
        items.forEach((item, i) => {
          item.priorityLevel = levels[i]!;
          item.amqpPriority = deps.priorityOf(levels[i]!);
        });
      } catch (error) {
        for (const item of items) failed.set(item, { kind: 'PriorityFailures', error });
      }
    }),
  );
  return failed;
}

/** The items of each tenant, in batch order. */
function byTenant(items: Pending[]): Map<string, Pending[]> {
  const groups = new Map<string, Pending[]>();
  for (const item of items) groups.set(item.message.tenantId, [...(groups.get(item.message.tenantId) ?? []), item]);
  return groups;
}

function failureOf(messageId: string, kind: FailureKind, error: unknown): RecordFailure {
  const fields = error instanceof InvalidEventError ? { fields: error.fields } : {};
  return { messageId, kind, ...fields, reason: errorText(error) };
}
