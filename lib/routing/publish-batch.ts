import type { ConfirmChannel } from 'amqplib';
import { InvalidEventError } from '../platform/errors';
import { publishIsolatingRefusals } from '../rabbitmq/confirms';
import type { AmqpSession } from '../rabbitmq/connection';
import { putInDoubt } from '../rabbitmq/connection';
import { stampedForSizing, stampStagedAt } from '../staging/staging-names';
import { headerTableIssues } from './amqp-limits';
import { dropFailed, type Failed, type Pending } from './pending';
import { failureOf, type RecordFailure } from './record-failures';
import type { StagingQueues } from './staging-queues';

/** What a batch's publishes need. */
export interface Publisher {
  amqp: Pick<AmqpSession, 'sharedConfirmChannel' | 'openConfirmChannel'>;
  stagingQueues: StagingQueues;
  confirmTimeoutMs: number;
  now: () => number;
}

/** A batch on its way through the router's steps: what is left to publish, on which channel, what was routed, what failed. */
export interface Batch {
  pending: Pending[];
  failures: RecordFailure[];
  /** Confirmed in their staging queue, or in a target that bypasses staging. */
  routed: Pending[];
  /** Confirmed in their target under a grant (docs/router.md "Direct routing"): not staged, no pass asked for. */
  direct: Pending[];
  /** The shared confirm channel; none when it could not be had (every pending record then failed). */
  channel?: ConfirmChannel;
}

/** How a publish goes: straight to each message's target under a grant, or to its destination. */
export interface PublishMode {
  /** A staged message returned (its queue reaped since this container declared it) is handed back instead of failed. */
  retry: boolean;
  /** To the target itself, unstamped, as a bypass: direct routing under a grant. */
  direct?: boolean;
  timeoutMs?: number;
}

/**
 * Publishes on the shared channel; puts it in doubt (closed, and not used again) when confirms are
 * still owed: they would answer the next batch.
 */
export async function publish(
  publisher: Publisher,
  channel: ConfirmChannel,
  pending: Pending[],
  failures: RecordFailure[],
  { retry, direct = false, timeoutMs = publisher.confirmTimeoutMs }: PublishMode,
): Promise<{ routed: Pending[]; returned: Pending[] }> {
  const routed: Pending[] = [];
  const returned: Pending[] = [];
  let inDoubt = true;
  try {
    const outcomes = await publishIsolatingRefusals(
      channel,
      () => publisher.amqp.openConfirmChannel(),
      pending.map(({ destination, message, amqpPriority, bypass }) => ({
        queue: direct ? message.target : destination,
        body: message.body,
        options: {
          ...message.properties,
          priority: amqpPriority,
          ...(bypass || direct ? {} : { headers: stagedHeaders(message.properties.headers, publisher.now()) }),
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
      if (!direct) publisher.stagingQueues.forget(item.destination);
      if (retry && outcome.reason === 'returned' && !item.bypass) returned.push(item);
      else failures.push(failureOf(item.record.messageId, 'BrokerFailures', outcome.error));
    });
    inDoubt = outcomes.some((outcome) => !outcome.confirmed && outcome.reason === 'timeout');
  } finally {
    if (inDoubt) putInDoubt(channel);
  }
  return { routed, returned };
}

/**
 * Declares the batch's staging queues (once: the one place a batch's new queues are known), publishes
 * its messages, and once more those returned, their queues declared again (docs/router.md
 * "Staging-queue lifecycle").
 */
export async function publishStaged(publisher: Publisher, batch: Batch): Promise<void> {
  batch.pending = await declareStaging(publisher, batch.pending, batch.failures);
  if (!batch.channel || batch.pending.length === 0) return;
  const first = await publish(publisher, batch.channel, batch.pending, batch.failures, { retry: true });
  batch.routed.push(...first.routed);
  if (first.returned.length === 0) return;
  const again = await declareStaging(publisher, first.returned, batch.failures);
  if (again.length === 0) return;
  const channel = await sharedChannel(publisher, again, batch.failures);
  if (channel)
    batch.routed.push(...(await publish(publisher, channel, again, batch.failures, { retry: false })).routed);
}

/** The items whose staging queue is declared (a cache hit costs nothing); the items of one that fails fail. */
async function declareStaging(publisher: Publisher, items: Pending[], failures: RecordFailure[]): Promise<Pending[]> {
  return dropFailed(items, await ensureStagingQueues(publisher.stagingQueues, items), failures);
}

/** The shared confirm channel; none to be had: `items` fail (the rest of the batch goes on without them). */
export async function sharedChannel(
  publisher: Publisher,
  items: Pending[],
  failures: RecordFailure[],
): Promise<ConfirmChannel | undefined> {
  try {
    return await publisher.amqp.sharedConfirmChannel();
  } catch (error) {
    dropFailed(items, new Map(items.map((p) => [p, { kind: 'BrokerFailures', error }])), failures);
    return undefined;
  }
}

/** Declares the staging queues of the staged items (a cache hit costs nothing); each one that fails fails its items. */
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
 * A staged copy's headers: stamped with when it was staged, from which the distributor measures its
 * wait and which it takes off (lib/staging/staging-names.ts). A table the stamp would push past AMQP's
 * encoding limit stays as the sender sent it: the message is routed, its wait is not measured.
 */
function stagedHeaders(headers: Record<string, unknown> | undefined, at: number) {
  const stamped = stampStagedAt(headers, at);
  return headerTableIssues(stampedForSizing(stamped)).length === 0 ? stamped : headers;
}
