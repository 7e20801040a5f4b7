import type { ConfirmChannel } from 'amqplib';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { RequestPass } from '../distributor/pass-requests';
import { BatchFailedError, errorText, InvalidEventError } from '../errors';
import type { TenantCounterStore } from '../priority/counter-store';
import type { PriorityMapping } from '../priority/rules';
import {
  defaultMutators,
  type QueueNameMutator,
  type StagingDestination,
  stagingDestination,
} from '../queues/staging-names';
import { closeWithin } from '../rabbitmq/close';
import { publishAndConfirm } from '../rabbitmq/confirms';
import { parseAfterProcessRecord, type RoutableMessage } from './event';
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

/** Tenant-less messages one batch routed (ROUTER_MISSING_TENANT=route), kept apart from tenants' figures. */
export interface TenantlessRouted {
  documents: number;
  /** Each destination (staging queue by workflow, or the target) with its count. */
  destinations: Record<string, number>;
}

/** A message whose full staging queue name would pass 255 bytes, and where it went instead. */
export interface NameShortened {
  target: string;
  queue: string;
  shortened: NonNullable<StagingDestination['shortened']>;
}

export type RouterMetric = 'Routed' | 'RoutedWithoutTenant' | 'NamesShortened' | FailureKind;

/** Where the router reports; never given a message body. */
export interface RouterReport extends StagingQueuesReport {
  failed(failure: RecordFailure): void;
  counted(metric: RouterMetric, count: number): void;
  tenantRouted(routed: TenantRouted): void;
  tenantlessRouted(routed: TenantlessRouted): void;
  nameShortened(shortened: NameShortened): void;
  /** Messages are staged, but asking for a distributor pass failed: they wait for the schedule's. */
  passRequestFailed(target: string, error: unknown): void;
}

/** What the router does with a message that names no tenant. */
export type MissingTenantPolicy = 'route' | 'reject';

export interface RouterDeps {
  counters: TenantCounterStore;
  amqp: { sharedConfirmChannel(): Promise<ConfirmChannel> };
  stagingQueues: StagingQueues;
  targets: Readonly<Record<string, TargetSettings>>;
  priorityOf: PriorityMapping;
  /** The level of a tenant-less message (the quiet level of SPEC §1): it never counts against a tenant. */
  quietLevel: number;
  /** `route` (upstream's behaviour, default): by workflow alone, or straight to the target; `reject`: dead-letter it. */
  missingTenant: MissingTenantPolicy;
  confirmTimeoutMs: number;
  /** The RabbitMQ user the router publishes as: the only `user-id` the broker accepts. */
  publisherUser: string;
  report: RouterReport;
  /** Asks for a distributor pass over a target that just got staged messages (docs/distributor.md). */
  requestPass?: RequestPass;
  mutators?: readonly QueueNameMutator[];
  now?: () => number;
}

interface Pending {
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
        checkUserId(message, deps.publisherUser);
        if (message.tenantId === undefined && deps.missingTenant === 'reject') {
          throw new InvalidEventError('tenantId', 'is required (ROUTER_MISSING_TENANT=reject)');
        }
        if (deps.targets[message.target]?.bypassStaging) {
          return [{ record, message, bypass: true, destination: message.target }];
        }
        const { queue, shortened } = stagingDestination(message, mutators);
        return [{ record, message, bypass: queue === message.target, destination: queue, shortened }];
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
        const outcomes = await publishAndConfirm(
          channel,
          pending.map(({ destination, message, amqpPriority }) => ({
            queue: destination,
            body: message.body,
            options: { ...message.properties, priority: amqpPriority },
          })),
          deps.confirmTimeoutMs,
        );
        outcomes.forEach((outcome, i) => {
          if (outcome.confirmed) {
            routed.push(pending[i]!);
          } else {
            deps.stagingQueues.forget(pending[i]!.destination);
            failures.push(failureOf(pending[i]!.record.messageId, 'BrokerFailures', outcome.error));
          }
        });
        // Confirms still owed would arrive during the next invocation's publishes.
        channelInDoubt = outcomes.some((outcome) => !outcome.confirmed && outcome.reason === 'timeout');
      } else {
        channelInDoubt = false;
      }
    } finally {
      if (channelInDoubt && channel) await closeWithin(channel);
    }

    // Confirmed in staging: a failed request only leaves them to the schedule, so the records stand.
    const staged = new Set(routed.filter((p) => !p.bypass).map((p) => p.message.target));
    if (deps.requestPass) {
      const requestPass = deps.requestPass;
      await Promise.all(
        [...staged].map((target) =>
          requestPass(target, 0).catch((error: unknown) => deps.report.passRequestFailed(target, error)),
        ),
      );
    }

    for (const failure of failures) deps.report.failed(failure);
    for (const [tenant, items] of byTenant(routed)) {
      deps.report.tenantRouted({ tenant, documents: items.length, priorityLevel: items.at(-1)!.priorityLevel! });
    }
    const tenantless = routed.filter((item) => item.message.tenantId === undefined);
    if (tenantless.length > 0) {
      const destinations: Record<string, number> = {};
      for (const item of tenantless) destinations[item.destination] = (destinations[item.destination] ?? 0) + 1;
      deps.report.tenantlessRouted({ documents: tenantless.length, destinations });
    }
    const shortened = routed.filter((item) => item.shortened !== undefined);
    for (const item of shortened) {
      deps.report.nameShortened({ target: item.message.target, queue: item.destination, shortened: item.shortened! });
    }
    deps.report.counted('Routed', routed.length);
    deps.report.counted('RoutedWithoutTenant', tenantless.length);
    deps.report.counted('NamesShortened', shortened.length);
    for (const kind of ['Rejected', 'PriorityFailures', 'BrokerFailures'] as const) {
      deps.report.counted(kind, failures.filter((f) => f.kind === kind).length);
    }
    failWholeBatch(event.Records.length, failures);
    return { batchItemFailures: failures.map((f) => ({ itemIdentifier: f.messageId })) };
  };
}

/**
 * RabbitMQ refuses a `user-id` other than the connection's user and closes the channel, which
 * would fail every publish in flight beside it: such an event is rejected alone, before publishing.
 */
function checkUserId(message: RoutableMessage, publisherUser: string): void {
  const { userId } = message.properties;
  if (userId !== undefined && userId !== publisherUser) {
    throw new InvalidEventError(
      'message.properties.userId',
      'must be the RabbitMQ user Fairway publishes as, or be left out (the broker refuses any other)',
    );
  }
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

/**
 * The k events of one tenant are k checks in batch order, in one write; tenants run in parallel.
 * A tenant-less event takes the quiet level without a check: there is no counter to charge.
 */
async function checkPriorities(deps: RouterDeps, pending: Pending[], nowMs: number): Promise<Failed> {
  const failed: Failed = new Map();
  for (const item of pending) {
    if (item.message.tenantId !== undefined) continue;
    item.priorityLevel = deps.quietLevel;
    item.amqpPriority = deps.priorityOf(deps.quietLevel);
  }
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

/** The items of each tenant, in batch order; tenant-less items are in no group. */
function byTenant(items: Pending[]): Map<string, Pending[]> {
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

/**
 * Every record failed, and not only because they were bad events: the broker or DynamoDB is
 * down. The invocation fails (Powertools Batch's full-batch failure), so that the Lambda error
 * metric, the alarms and the event source's back-off see it; SQS retries the whole batch either way.
 */
function failWholeBatch(records: number, failures: readonly RecordFailure[]): void {
  const infrastructure = failures.filter((f) => f.kind !== 'Rejected');
  if (records === 0 || failures.length < records || infrastructure.length === 0) return;
  const kinds = [...new Set(infrastructure.map((f) => f.kind))].join(', ');
  throw new BatchFailedError(`${records} of ${records} records failed (${kinds}): ${infrastructure[0]!.reason}`);
}

function failureOf(messageId: string, kind: FailureKind, error: unknown): RecordFailure {
  const fields = error instanceof InvalidEventError ? { fields: error.fields } : {};
  return { messageId, kind, ...fields, reason: errorText(error) };
}
