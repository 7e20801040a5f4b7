import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { InvalidEventError } from '../platform/errors';
import type { AmqpSession } from '../rabbitmq/connection';
import { putInDoubt } from '../rabbitmq/connection';
import { userIdRefusal } from '../rabbitmq/publish-refusals';
import { defaultMutators, type QueueNameMutator, stagingDestination } from '../staging/staging-names';
import type { RequestWork } from '../work-board/requester';
import { directBatch } from './direct-batch';
import type { DirectGrants } from './direct-grants';
import { parseAfterProcessRecord } from './event';
import { dropFailed, type Pending } from './pending';
import { checkPriorities } from './priorities';
import type { TenantCounterStore } from './priority/counter-store';
import { mappingFromTable } from './priority/rules';
import { type Batch, type Publisher, publishStaged, sharedChannel } from './publish-batch';
import { batchItemFailures, failureOf, failWholeBatch, type RecordFailure } from './record-failures';
import { type RouterReport, reportBatch } from './report';
import type { RoutableMessage } from './routable-message';
import type { RouterSettings } from './settings';
import type { StagingQueues } from './staging-queues';

export interface RouterDeps {
  settings: RouterSettings;
  counters: TenantCounterStore;
  amqp: Pick<AmqpSession, 'sharedConfirmChannel' | 'openConfirmChannel'>;
  stagingQueues: StagingQueues;
  report: RouterReport;
  /** Asks for distributor passes over the targets that just got staged messages (docs/distributor.md "Run model"). */
  requestPass?: RequestWork;
  mutators?: readonly QueueNameMutator[];
  /** Direct routing under a grant (DIRECT_ROUTING=granted); without it every message is staged (SPEC §2). */
  direct?: DirectGrants;
  now?: () => number;
}

/**
 * The router (SPEC §2) over an SQS batch of after-process events: validate each, check its
 * tenant's priority (SPEC §1), publish it to its staging queue (or its target, for a target that
 * bypasses staging) with that priority. A record fails alone, in `batchItemFailures`, and is
 * never reported routed unless the broker confirmed it. Direct routing enters at `direct` alone.
 */
export function createRouter(deps: RouterDeps) {
  const { settings } = deps;
  const now = deps.now ?? Date.now;
  const mutators = deps.mutators ?? defaultMutators;
  const publisher: Publisher = { ...deps, confirmTimeoutMs: settings.confirmTimeoutMs, now };
  const routeDirect = deps.direct ? directBatch(deps.direct, publisher, deps.report) : undefined;
  const priorityCheck = {
    counters: deps.counters,
    priorityOf: mappingFromTable(settings.amqpPriorities),
    quietLevel: settings.priorityRules.quietLevel,
  };

  return async function route(event: SQSEvent): Promise<SQSBatchResponse> {
    const batch = prepareBatch(event, (record) => prepare(record, settings, mutators));
    if (batch.pending.length > 0) {
      // Before the priority checks, so that a broker that is down does not count documents twice.
      batch.channel = await sharedChannel(publisher, batch.pending, batch.failures);
      if (!batch.channel) batch.pending = [];
    }
    try {
      batch.pending = dropFailed(
        batch.pending,
        await checkPriorities(priorityCheck, batch.pending, now()),
        batch.failures,
      );
    } catch (error) {
      // It does not reject; should it, the channel is discarded rather than trusted.
      if (batch.channel) putInDoubt(batch.channel);
      throw error;
    }
    await routeDirect?.(batch);
    await publishStaged(publisher, batch);
    return answer(deps, event, batch);
  };
}

/** The batch's records as messages on their way; a bad event fails its record alone. */
function prepareBatch(event: SQSEvent, prepareOne: (record: SQSRecord) => Pending): Batch {
  const failures: RecordFailure[] = [];
  const pending = event.Records.flatMap((record): Pending[] => {
    try {
      return [prepareOne(record)];
    } catch (error) {
      failures.push(failureOf(record.messageId, 'Rejected', error));
      return [];
    }
  });
  return { pending, failures, routed: [], direct: [] };
}

/** The record as a message on its way to its destination; throws InvalidEventError for a bad event. */
function prepare(record: SQSRecord, settings: RouterSettings, mutators: readonly QueueNameMutator[]): Pending {
  const message = parseAfterProcessRecord(record);
  checkUserId(message, settings.publisherUser);
  if (message.tenantId === undefined && settings.missingTenant === 'reject') {
    throw new InvalidEventError('tenantId', 'is required (ROUTER_MISSING_TENANT=reject)');
  }
  if (settings.targets[message.target]?.bypassStaging) {
    return { record, message, bypass: true, destination: message.target };
  }
  const { queue, shortened } = stagingDestination(message, mutators);
  return { record, message, bypass: queue === message.target, destination: queue, shortened };
}

/** Pass requests for the staged targets, the batch's report, and the records that failed. */
async function answer(deps: RouterDeps, event: SQSEvent, batch: Batch): Promise<SQSBatchResponse> {
  const { routed, direct, failures } = batch;
  // Confirmed in staging: a failed request only leaves them to the schedule, so the records stand.
  if (deps.requestPass) await requestPasses(deps.requestPass, routed, deps.report);
  reportBatch(deps.report, batch);
  failWholeBatch(event.Records.length, failures);
  const confirmed = new Set([...routed, ...direct].map((p) => p.record.messageId));
  return { batchItemFailures: batchItemFailures(failures, confirmed) };
}

/**
 * RabbitMQ refuses a `user-id` other than the connection's user and closes the channel, which
 * would fail every publish in flight beside it: such an event is rejected alone, before publishing.
 */
function checkUserId(message: RoutableMessage, publisherUser: string): void {
  const refusal = userIdRefusal(message.properties.userId, publisherUser);
  if (refusal) throw new InvalidEventError(`message.properties.${refusal.property}`, refusal.reason);
}

/**
 * One request for every target that got staged messages (one work-board update per batch); a
 * failed request is reported for each of them, never thrown.
 */
async function requestPasses(requestWork: RequestWork, routed: readonly Pending[], report: RouterReport) {
  const staged = [...new Set(routed.filter((p) => !p.bypass).map((p) => p.message.target))];
  if (staged.length === 0) return;
  await requestWork(staged).catch((error: unknown) => {
    for (const target of staged) report.passRequestFailed(target, error);
  });
}
