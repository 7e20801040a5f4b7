import type { ConfirmChannel } from 'amqplib';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { InvalidEventError } from '../platform/errors';
import { isInDoubt, putInDoubt } from '../rabbitmq/answer-within';
import { publishIsolatingRefusals } from '../rabbitmq/confirms';
import type { AmqpSession } from '../rabbitmq/connection';
import { userIdRefusal } from '../rabbitmq/publish-refusals';
import { stampedForSizing, stampStagedAt } from '../staging/staged-at';
import { defaultMutators, type QueueNameMutator, stagingDestination } from '../staging/staging-names';
import { readFresh } from '../work-board/grants';
import type { RequestWork } from '../work-board/requester';
import { headerTableIssues } from './amqp-limits';
import type { DirectGrants } from './direct-grants';
import { parseAfterProcessRecord } from './event';
import { dropFailed, type Failed, type Pending } from './pending';
import { checkPriorities } from './priorities';
import type { TenantCounterStore } from './priority/counter-store';
import { mappingFromTable } from './priority/rules';
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
 * never reported routed unless the broker confirmed it.
 */
export function createRouter(deps: RouterDeps) {
  const { settings } = deps;
  const mutators = deps.mutators ?? defaultMutators;
  const now = deps.now ?? Date.now;
  const priorityCheck = {
    counters: deps.counters,
    priorityOf: mappingFromTable(settings.amqpPriorities),
    quietLevel: settings.priorityRules.quietLevel,
  };

  /** The record as a message on its way to its destination; throws InvalidEventError for a bad event. */
  const prepare = (record: SQSRecord): Pending => {
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
  };

  /**
   * Publishes on the shared channel; puts it in doubt (closed, and not used again) when confirms are
   * still owed: they would answer the next batch. With `retry`, a staged message returned (its queue
   * reaped since this container declared it) is handed back instead of failed.
   */
  const publish = async (
    channel: ConfirmChannel,
    pending: Pending[],
    failures: RecordFailure[],
    retry: boolean,
    timeoutMs = settings.confirmTimeoutMs,
  ) => {
    const routed: Pending[] = [];
    const returned: Pending[] = [];
    let inDoubt = true;
    try {
      const outcomes = await publishIsolatingRefusals(
        channel,
        () => deps.amqp.openConfirmChannel(),
        pending.map(({ destination, message, amqpPriority, bypass }) => ({
          queue: destination,
          body: message.body,
          options: {
            ...message.properties,
            priority: amqpPriority,
            ...(bypass ? {} : { headers: stagedHeaders(message.properties.headers, now()) }),
          },
        })),
        timeoutMs,
      );
      outcomes.forEach((outcome, i) => {
        const item = pending[i]!;
        if (outcome.confirmed) {
          routed.push(item);
          return;
        }
        deps.stagingQueues.forget(item.destination);
        if (retry && outcome.reason === 'returned' && !item.bypass) returned.push(item);
        else failures.push(failureOf(item.record.messageId, 'BrokerFailures', outcome.error));
      });
      inDoubt = outcomes.some((outcome) => !outcome.confirmed && outcome.reason === 'timeout');
    } finally {
      if (inDoubt) putInDoubt(channel);
    }
    return { routed, returned };
  };

  /** Declares the returned messages' queues again and publishes them once more (docs/router.md "Staging-queue lifecycle"). */
  const publishAgain = async (returned: Pending[], failures: RecordFailure[]): Promise<Pending[]> => {
    const again = dropFailed(returned, await ensureStagingQueues(deps.stagingQueues, returned), failures);
    if (again.length === 0) return [];
    let channel: ConfirmChannel;
    try {
      channel = await deps.amqp.sharedConfirmChannel();
    } catch (error) {
      dropFailed(again, new Map(again.map((p) => [p, { kind: 'BrokerFailures', error }])), failures);
      return [];
    }
    return (await publish(channel, again, failures, false)).routed;
  };

  /** Another shared channel for the staged publishes after the direct ones left this one in doubt; none: they fail. */
  const freshChannel = async (pending: Pending[], failures: RecordFailure[]): Promise<ConfirmChannel | undefined> => {
    try {
      return await deps.amqp.sharedConfirmChannel();
    } catch (error) {
      const staged = pending.filter((p) => !p.direct);
      dropFailed(staged, new Map(staged.map((p) => [p, { kind: 'BrokerFailures', error }])), failures);
      return undefined;
    }
  };

  return async function route(event: SQSEvent): Promise<SQSBatchResponse> {
    const failures: RecordFailure[] = [];
    let pending = event.Records.flatMap((record): Pending[] => {
      try {
        return [prepare(record)];
      } catch (error) {
        failures.push(failureOf(record.messageId, 'Rejected', error));
        return [];
      }
    });

    let channel: ConfirmChannel | undefined;
    if (pending.length > 0) {
      try {
        // Before the priority checks, so that a broker that is down does not count documents twice.
        channel = await deps.amqp.sharedConfirmChannel();
      } catch (error) {
        pending = dropFailed(pending, new Map(pending.map((p) => [p, { kind: 'BrokerFailures', error }])), failures);
      }
    }
    const routed: Pending[] = [];
    try {
      if (channel && deps.direct) await chooseDirect(deps.direct, pending, deps.report);
      pending = dropFailed(pending, await ensureStagingQueues(deps.stagingQueues, pending), failures);
      pending = dropFailed(pending, await checkPriorities(priorityCheck, pending, now()), failures);
      // A grant read too long ago by now: staged after all (its publish would start too late).
      const late = pending.filter((p) => p.direct && !readFresh(p.direct.readAt, now(), deps.direct!.settings));
      for (const item of late) stageAfterAll(item);
      pending = dropFailed(pending, await ensureStagingQueues(deps.stagingQueues, late), failures);
    } catch (error) {
      // Neither step rejects; should one, the channel is discarded rather than trusted.
      if (channel) putInDoubt(channel);
      throw error;
    }
    const direct = pending.filter((p) => p.direct);
    if (channel && direct.length > 0) {
      // First, within the grant's read window; a publish unconfirmed within the publish window
      // fails its record: the distributor's revocation wait counts on it.
      routed.push(...(await publish(channel, direct, failures, false, deps.direct!.settings.publishMs)).routed);
      if (isInDoubt(channel)) channel = await freshChannel(pending, failures);
    }
    const staged = pending.filter((p) => !p.direct);
    if (channel && staged.length > 0) {
      const first = await publish(channel, staged, failures, true);
      routed.push(...first.routed);
      if (first.returned.length > 0) routed.push(...(await publishAgain(first.returned, failures)));
    }

    // Confirmed in staging: a failed request only leaves them to the schedule, so the records stand.
    if (deps.requestPass) await requestPasses(deps.requestPass, routed, deps.report);
    reportBatch(deps.report, routed, failures);
    failWholeBatch(event.Records.length, failures);
    return { batchItemFailures: batchItemFailures(failures, new Set(routed.map((p) => p.record.messageId))) };
  };
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
 * A staged copy's headers: stamped with when it was staged, from which the distributor measures its
 * wait and which it takes off (lib/staging/staged-at.ts). A table the stamp would push past AMQP's
 * encoding limit stays as the sender sent it: the message is routed, its wait is not measured.
 */
function stagedHeaders(headers: Record<string, unknown> | undefined, at: number) {
  const stamped = stampStagedAt(headers, at);
  return headerTableIssues(stampedForSizing(stamped)).length === 0 ? stamped : headers;
}

/**
 * Marks the batch's staged messages that go straight to their granted, nearly empty target
 * (docs/router.md "Direct routing"). A grant or depth that cannot be read stages them all (counted).
 */
async function chooseDirect(direct: DirectGrants, pending: readonly Pending[], report: RouterReport): Promise<void> {
  const staged = pending.filter((p) => !p.bypass);
  if (staged.length === 0) return;
  let readAts: (number | undefined)[];
  try {
    readAts = await direct.choose(staged.map((p) => p.message.target));
  } catch (error) {
    report.directRoutingUnread(error);
    return;
  }
  staged.forEach((item, i) => {
    const readAt = readAts[i];
    if (readAt === undefined) return;
    item.direct = { readAt, staged: { destination: item.destination, shortened: item.shortened } };
    item.bypass = true;
    item.destination = item.message.target;
    delete item.shortened;
  });
}

/** A message chosen to go direct whose grant read is too old to start its publish now: back to its staging queue. */
function stageAfterAll(item: Pending): void {
  const { destination, shortened } = item.direct!.staged;
  delete item.direct;
  item.bypass = false;
  item.destination = destination;
  if (shortened === undefined) delete item.shortened;
  else item.shortened = shortened;
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
