import type { Options } from 'amqplib';
import { BrokerError, BrokerTimeoutError, InvalidEventError } from '../platform/errors';
import type { AmqpSession } from '../rabbitmq/connection';
import { channelAnswer, closeWithin } from '../rabbitmq/connection';
import type { ManagementClient, QueueInfo } from '../rabbitmq/management';
import type { QueueToResolve } from '../rabbitmq/queue-policies';
import { brokerError, ReplyCode } from '../rabbitmq/reply-codes';
import { ringDoorbell } from '../staging/doorbell';
import type { StagingRegistry } from '../staging/staging-registry';
import type { StagingPriorities, TargetSettings } from './settings';
import { STAGING_OVERFLOW, StagingLimits } from './staging-limits';

export interface QueueShape {
  durable: boolean;
  arguments: Record<string, unknown>;
  /** Given in ROUTER_TARGETS: a quorum type there is kept for the staging queues. */
  configured?: boolean;
}

/**
 * The only target arguments a staging queue copies (`x-max-priority` only with
 * ROUTER_STAGING_PRIORITIES=copy): none of them can drop, refuse, expire or
 * dead-letter a message waiting its turn. Everything else is left out, known or not: a TTL, a
 * length limit and its overflow policy, `x-expires`, dead-lettering, a delivery limit, and
 * whatever a later RabbitMQ adds. The target's limit is the distributor's capacity, not the tenant's.
 * Left out too: what RabbitMQ 4.3 refuses in a declare though a target upgraded from 3.13 may still
 * carry it (`x-queue-mode`, `x-queue-master-locator`, `x-queue-version` 1; docs/distributor.md).
 * Each applies to one queue type only: a classic queue refuses the quorum ones (3.10 refuses the
 * leader locator too), a quorum queue `x-max-priority` and `x-queue-version`.
 */
const argumentsCopied: Readonly<Record<StagingQueueType, readonly string[]>> = {
  classic: ['x-max-priority', 'x-queue-version'],
  quorum: ['x-queue-leader-locator', 'x-quorum-initial-group-size'],
};

type StagingQueueType = 'classic' | 'quorum';

/**
 * The arguments of a staging queue of a target with `target` arguments: its type, the copied ones,
 * and `x-overflow: reject-publish`, so that a length limit a policy sets makes the broker nack a
 * publish (the record fails and is retried) instead of dropping a waiting message. Without
 * `copy`, no `x-max-priority`: a priority queue costs the broker about five times the memory of a
 * plain one, and a staging queue needs no order of its own (docs/router.md "Staging queues").
 *
 * Always classic, and said so (a vhost's default type may be quorum), unless `keepQuorum` (a shape
 * from ROUTER_TARGETS that says quorum): a quorum staging queue costs the broker about 3.7 times the
 * memory and cannot be reaped, since RabbitMQ refuses a conditional delete of a quorum queue
 * (docs/router.md "Staging-queue lifecycle"). A stream target's staging queue is classic too.
 */
export function stagingArguments(
  target: Readonly<Record<string, unknown>>,
  priorities: StagingPriorities = 'none',
  keepQuorum = false,
): Record<string, unknown> {
  const type: StagingQueueType = keepQuorum && target['x-queue-type'] === 'quorum' ? 'quorum' : 'classic';
  const copied = Object.entries(target).filter(
    ([name, value]) =>
      argumentsCopied[type].includes(name) &&
      (name !== 'x-max-priority' || priorities === 'copy') &&
      (name !== 'x-queue-version' || Number(value) !== 1),
  );
  return { 'x-queue-type': type, ...Object.fromEntries(copied), ...STAGING_OVERFLOW };
}

/** What the staging-queue cache reports; the router's report carries it. */
export interface StagingQueuesReport {
  /** A staging queue exists with arguments unlike its target's; it is used as it is. */
  stagingQueueKept(kept: { stagingQueue: string; target: string }): void;
}

export interface StagingQueues {
  /** Declares `staging` with its target's shape unless it was declared within the cache period. */
  ensure(staging: string, target: string): Promise<void>;
  /** Forgets a queue that turned out missing (a publish to it was returned): the next ensure declares and touches it. */
  forget(staging: string): void;
}

/** How the cache declares and records staging queues, beyond the cache period. */
export interface StagingQueueOptions {
  /** ROUTER_STAGING_PRIORITIES (default `none`). */
  priorities?: StagingPriorities;
  /** Where a queue in use is recorded (STAGING_TABLE); without one nothing is. */
  registry?: Pick<StagingRegistry, 'touch'>;
  /** STAGING_TOUCH_MS (lib/settings/common.ts): a queue's record is touched at most this often by this container. */
  touchPeriodMs?: number;
  now?: () => number;
}

/** The reaper holds the queue (docs/router.md "Staging-queue lifecycle"): its records fail and SQS retries them. */
export class StagingQueueReapingError extends BrokerError {}

/**
 * Declares missing staging queues like their target (SPEC §2): same durability, the arguments of
 * `stagingArguments`, never exclusive or auto-delete, since either would lose waiting messages.
 * The reference implementation caches known staging queues for a minute; so does this.
 */
export class CachedStagingQueues implements StagingQueues {
  private readonly declared = new Map<string, number>();
  /** When this container last touched each queue's record. */
  private readonly touched = new Map<string, number>();
  private readonly shapes = new Map<string, { shape: QueueShape; until: number }>();
  private readonly inFlight = new Map<string, { done: Promise<void>; touch: boolean }>();
  /** Shape lookups under way, by target: concurrent cache misses share one management request. */
  private readonly shapesInFlight = new Map<string, Promise<QueueShape>>();

  constructor(
    private readonly session: Pick<AmqpSession, 'sharedChannel' | 'openChannel'>,
    private readonly management: Pick<ManagementClient, 'getQueue' | 'listPolicies'>,
    private readonly targets: Readonly<Record<string, TargetSettings>>,
    private readonly cacheMs: number,
    private readonly report: StagingQueuesReport,
    private readonly options: StagingQueueOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.limits = new StagingLimits(management, cacheMs, this.now);
  }

  private readonly now: () => number;
  private readonly limits: StagingLimits;

  ensure(staging: string, target: string): Promise<void> {
    const now = this.now();
    const declare = (this.declared.get(staging) ?? -Infinity) <= now;
    const touch = this.touchDue(staging, now);
    if (!declare && !touch) return Promise.resolve();
    const under = this.inFlight.get(staging);
    // A declare under way without the touch now due: the touch follows it, before any publish.
    if (under) return under.touch || !touch ? under.done : under.done.then(() => this.ensure(staging, target));
    const done = this.prepare(staging, target, declare, touch).finally(() => this.inFlight.delete(staging));
    this.inFlight.set(staging, { done, touch });
    return done;
  }

  forget(staging: string): void {
    this.declared.delete(staging);
    this.touched.delete(staging);
  }

  private touchDue(staging: string, now: number): boolean {
    if (!this.options.registry) return false;
    return (this.touched.get(staging) ?? -Infinity) <= now - (this.options.touchPeriodMs ?? 0);
  }

  /** The touch beside the declare: a cold batch pays no extra round trip; nothing is published before both. */
  private async prepare(staging: string, target: string, declare: boolean, touch: boolean): Promise<void> {
    const touched = touch ? this.touch(staging, target) : undefined;
    touched?.catch(() => undefined); // awaited below, unless the declare fails first
    if (declare) await this.declare(staging, target);
    await touched;
  }

  private async touch(staging: string, target: string): Promise<void> {
    const at = this.now();
    if ((await this.options.registry!.touch(target, staging, at)) === 'reaping') {
      throw new StagingQueueReapingError(
        `the staging queue ${JSON.stringify(staging)} is being deleted as unused; its records are retried`,
      );
    }
    if (this.touched.size >= 10_000) {
      const stale = at - (this.options.touchPeriodMs ?? 0);
      for (const [name, when] of this.touched) if (when <= stale) this.touched.delete(name);
    }
    this.touched.set(staging, at);
  }

  /** Declares the queue, then checks that its effective limits cannot drop a waiting message. */
  private async declare(staging: string, target: string): Promise<void> {
    // Listed beside the declare, not after it: a cold batch pays no extra round trip.
    const policies = this.limits.policies();
    policies.catch(() => undefined); // awaited below, unless the declare fails first
    const { queue, kept } = await this.declareOrKeep(staging, target);
    this.limits.check(queue, kept, await policies);
    this.remember(staging);
    // A hint to an execution refilling the target: never awaited, and its failure fails nothing.
    void this.session
      .sharedChannel()
      .then((channel) => ringDoorbell(channel, target, staging))
      .catch(() => undefined);
  }

  /** The queue as the limits check reads it: as declared, or as it exists with other arguments (kept). */
  private async declareOrKeep(staging: string, target: string): Promise<{ queue: QueueToResolve; kept: boolean }> {
    const shape = await this.shapeOf(target);
    const options = {
      durable: shape.durable,
      exclusive: false,
      autoDelete: false,
      arguments: stagingArguments(shape.arguments, this.options.priorities, shape.configured),
    };
    const declared = {
      queue: { name: staging, type: String(options.arguments['x-queue-type']), arguments: options.arguments },
      kept: false,
    };
    const failure = (cause: unknown) =>
      brokerError(`RabbitMQ did not declare the staging queue ${JSON.stringify(staging)}`, cause);
    try {
      // One long-lived channel declares every staging queue of the container: a cold batch of new
      // queues costs one declare round trip each, not a channel open and close around each.
      const channel = await this.session.sharedChannel();
      await channelAnswer(channel, channel.assertQueue(staging, options), declareOf(staging));
      return declared;
    } catch (cause) {
      let error = failure(cause);
      // No reply code: the channel closed under this declare, most likely because the broker
      // refused another declare of the batch on it (a kept queue below). Declared again on a
      // channel of its own, which no other declare's refusal can close. Not after a declare left
      // unanswered: that broker would not answer the second either.
      if (error.replyCode === undefined && !(error instanceof BrokerTimeoutError)) {
        try {
          await this.declareAlone(staging, options);
          return declared;
        } catch (again) {
          error = failure(again);
        }
      }
      // Precondition failed: the queue exists with other arguments, or an argument is invalid (the
      // broker's reply text says which, and is kept in the error). An existing queue is all routing
      // needs; the broker has closed the channel (the session opens another next time).
      if (error.replyCode !== ReplyCode.PRECONDITION_FAILED) throw error;
      const queue = await this.existing(staging);
      if (!queue) throw error;
      this.report.stagingQueueKept({ stagingQueue: staging, target });
      return { queue, kept: true };
    }
  }

  /** A kept queue's own type and arguments, for the limits check; undefined when it does not exist. */
  private async existing(staging: string): Promise<QueueToResolve | undefined> {
    const info = await this.management.getQueue(staging);
    return info && { name: staging, type: info.type, arguments: info.arguments };
  }

  private async declareAlone(staging: string, options: Options.AssertQueue): Promise<void> {
    const channel = await this.session.openChannel();
    try {
      await channelAnswer(channel, channel.assertQueue(staging, options), declareOf(staging));
    } finally {
      await closeWithin(channel); // already closed by a refusal, or bounded
    }
  }

  /** A warm container may see many tenants: expired names are dropped so the cache stays bounded. */
  private remember(staging: string) {
    const now = this.now();
    if (this.declared.size >= 10_000) {
      for (const [name, until] of this.declared) if (until <= now) this.declared.delete(name);
    }
    this.declared.set(staging, now + this.cacheMs);
  }

  private async shapeOf(target: string): Promise<QueueShape> {
    const configured = this.targets[target];
    if (configured?.durable !== undefined || configured?.arguments !== undefined) {
      return { durable: configured.durable ?? true, arguments: configured.arguments ?? {}, configured: true };
    }
    const cached = this.shapes.get(target);
    if (cached && cached.until > this.now()) return cached.shape;
    let pending = this.shapesInFlight.get(target);
    if (!pending) {
      pending = this.lookUpShape(target).finally(() => this.shapesInFlight.delete(target));
      this.shapesInFlight.set(target, pending);
    }
    return pending;
  }

  private async lookUpShape(target: string): Promise<QueueShape> {
    const info: QueueInfo | undefined = await this.management.getQueue(target);
    if (!info) {
      throw new InvalidEventError(
        'target',
        'names a queue that does not exist, and ROUTER_TARGETS does not describe it',
      );
    }
    const shape = { durable: info.durable, arguments: info.arguments };
    this.shapes.set(target, { shape, until: this.now() + this.cacheMs });
    return shape;
  }
}

const declareOf = (staging: string) => `queue.declare of the staging queue ${JSON.stringify(staging)}`;
