import { EventEmitter } from 'node:events';
import type { ConfirmChannel } from 'amqplib';
import type { SQSEvent } from 'aws-lambda';
import { DirectGrants } from '../../../lib/routing/direct-grants';
import type { TenantCounterStore } from '../../../lib/routing/priority/counter-store';
import { type CheckResult, countsFrom, defaultRules } from '../../../lib/routing/priority/rules';
import type { RecordFailure } from '../../../lib/routing/record-failures';
import type { TenantRouted } from '../../../lib/routing/report';
import { createRouter } from '../../../lib/routing/router';
import { directRoutingDefaults } from '../../../lib/settings/common';

// What a real broker cannot be made to do on demand: accept a publish and never confirm it.
// Publishes to a queue named `silent…` are never confirmed; every other publish is confirmed.
class ChannelThatNeverConfirmsSilentQueues extends EventEmitter {
  readonly published: { queue: string; body: string; priority?: number }[] = [];
  closed = false;
  publish(_exchange: string, queue: string, body: Buffer, options: { priority?: number }, confirm: () => void) {
    this.published.push({ queue, body: body.toString(), priority: options.priority });
    if (!queue.startsWith('silent')) setImmediate(confirm);
    return true;
  }
  async close() {
    this.closed = true;
  }
}

/** DynamoDB's throttling error as the SDK raises it (dynalite cannot be made to throttle). */
class ProvisionedThroughputExceededException extends Error {
  override readonly name = 'ProvisionedThroughputExceededException';
}

/** A tenant counter that answers like a fresh tenant, except for the tenants it is told to fail. */
function counters(failing: Record<string, Error>): TenantCounterStore & { checked: string[] } {
  const checked: string[] = [];
  return {
    checked,
    async check(tenantId: string, k: number, nowMs: number): Promise<CheckResult> {
      checked.push(tenantId);
      const error = failing[tenantId];
      if (error) throw error;
      return countsFrom(0, k, nowMs, defaultRules);
    },
  };
}

let sequence = 0;
const record = (target: string, tenantId: string, body: string) => ({
  messageId: `m-${++sequence}`,
  body: JSON.stringify({ target, tenantId, message: { body } }),
});

function routerWith(store: TenantCounterStore, direct?: DirectGrants) {
  const channel = new ChannelThatNeverConfirmsSilentQueues();
  const failures: RecordFailure[] = [];
  const unread: unknown[] = [];
  const tenants: TenantRouted[] = [];
  const counts: Record<string, number> = {};
  const declared: string[] = [];
  const route = createRouter({
    settings: {
      // Bypass staging so that each record's queue is its target, named by the test.
      targets: { silent: { bypassStaging: true }, acked: { bypassStaging: true }, staged: { bypassStaging: false } },
      missingTenant: 'route',
      priorityRules: defaultRules,
      amqpPriorities: { 1: 9, 2: 8, 3: 7, 4: 6, 5: 5, 6: 4, 7: 3, 8: 2, 9: 1 },
      tenantTable: 'counters',
      stagingQueueCacheMs: 60_000,
      confirmTimeoutMs: 50,
      publisherUser: 'guest',
    },
    counters: store,
    ...(direct ? { direct } : {}),
    amqp: {
      sharedConfirmChannel: async () => channel as unknown as ConfirmChannel,
      openConfirmChannel: async () => channel as unknown as ConfirmChannel,
    },
    stagingQueues: {
      ensure: async (queue: string) => {
        declared.push(queue);
      },
      forget: () => undefined,
    },
    report: {
      failed: (failure) => failures.push(failure),
      stagingQueueKept: () => undefined,
      tenantlessRouted: () => undefined,
      nameShortened: () => undefined,
      passRequestFailed: () => undefined,
      directRoutingUnread: (error) => unread.push(error),
      tenantRouted: (routed) => tenants.push(routed),
      counted: (metric, count) => {
        counts[metric] = (counts[metric] ?? 0) + count;
      },
    },
  });
  const invoke = (records: ReturnType<typeof record>[]) =>
    route({ Records: records.map((r) => ({ ...r, attributes: {}, messageAttributes: {} })) } as unknown as SQSEvent);
  return { invoke, channel, failures, tenants, counts, unread, declared };
}

describe('createRouter when a step fails for one record', () => {
  it('fails a record whose publish the broker never confirmed, and does not count it as routed', async () => {
    const router = routerWith(counters({}));
    const confirmed = record('acked', 't1', 'confirmed');
    const unconfirmed = record('silent', 't2', 'unconfirmed');

    const result = await router.invoke([confirmed, unconfirmed]);

    expect(router.channel.published.map((p) => p.body)).toEqual(['confirmed', 'unconfirmed']);
    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: unconfirmed.messageId }] });
    expect(router.failures).toEqual([
      {
        messageId: unconfirmed.messageId,
        kind: 'BrokerFailures',
        reason: 'BrokerError: the broker did not confirm within 50 ms',
      },
    ]);
    expect(router.counts).toMatchObject({ Routed: 1, Rejected: 0, PriorityFailures: 0, BrokerFailures: 1 });
    expect(router.tenants).toEqual([{ tenant: 't1', documents: 1, priorityLevel: 1 }]);
    // A confirm still owed would be mistaken for one of the next invocation's: the channel is not reused.
    expect(router.channel.closed).toBe(true);
  });

  it.each([
    ['throttled', new ProvisionedThroughputExceededException('Rate of requests exceeds the allowed throughput')],
    ['missing table', Object.assign(new Error('Requested resource not found'), { name: 'ResourceNotFoundException' })],
  ])('fails every record of a tenant whose priority check failed (%s), publishing none of them', async (_, error) => {
    const store = counters({ failing: error });
    const router = routerWith(store);
    const first = record('acked', 'failing', 'f1');
    const fine = record('acked', 'fine', 'ok');
    const second = record('acked', 'failing', 'f2');

    const result = await router.invoke([first, fine, second]);

    expect(store.checked.sort()).toEqual(['failing', 'fine']);
    expect(result.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(
      [first.messageId, second.messageId].sort(),
    );
    expect(router.failures.map((f) => [f.messageId, f.kind, f.reason])).toEqual([
      [first.messageId, 'PriorityFailures', `${error.name}: ${error.message}`],
      [second.messageId, 'PriorityFailures', `${error.name}: ${error.message}`],
    ]);
    expect(router.channel.published.map((p) => p.body)).toEqual(['ok']);
    expect(router.counts).toMatchObject({ Routed: 1, Rejected: 0, PriorityFailures: 2, BrokerFailures: 0 });
    expect(router.tenants).toEqual([{ tenant: 'fine', documents: 1, priorityLevel: 1 }]);
  });

  it('stages the batch and reports why when the grants cannot be read (direct routing on)', async () => {
    const unreachable = new Error('connect ETIMEDOUT dynamodb');
    const direct = new DirectGrants({
      settings: { ...directRoutingDefaults(), mode: 'granted' },
      grants: () => Promise.reject(unreachable),
      depths: () => Promise.reject(new Error('no depth read without a grant')),
    });
    const router = routerWith(counters({}), direct);
    const event = record('staged', 't1', 'to stage');

    const result = await router.invoke([event]);

    expect(result).toEqual({ batchItemFailures: [] });
    expect(router.channel.published.map((p) => [p.queue, p.body])).toEqual([['staged»/t1', 'to stage']]);
    expect(router.unread).toEqual([unreachable]);
    expect(router.counts).toMatchObject({ Routed: 1, RoutedDirect: 0 });
  });

  it('decides direct routing once, after the priority checks: declares only what it stages, each queue once', async () => {
    const direct = new DirectGrants({
      settings: { ...directRoutingDefaults(), mode: 'granted', maxDepth: 1 },
      grants: async (targets) => new Map(targets.map((t) => [t, Date.now() + 60_000])),
      depths: async (targets) => new Map(targets.map((t) => [t, 0])),
    });
    const router = routerWith(counters({}), direct);
    const result = await router.invoke([
      record('staged', 't1', 'first'),
      record('staged', 't1', 'second'),
      record('staged', 't2', 'third'),
    ]);
    expect(result).toEqual({ batchItemFailures: [] });
    // Room for one (max depth 1, depth 0): the first goes to the target, unstamped; the rest are staged.
    expect(router.channel.published.map((p) => [p.queue, p.body])).toEqual([
      ['staged', 'first'],
      ['staged»/t1', 'second'],
      ['staged»/t2', 'third'],
    ]);
    expect(router.declared).toEqual(['staged»/t1', 'staged»/t2']);
    expect(router.counts).toMatchObject({ Routed: 3, RoutedDirect: 1 });
  });
});
