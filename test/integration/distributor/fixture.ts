import type { ConfirmChannel, Options } from 'amqplib';
import { type DistributorConfig, type DistributorTuning, loadDistributorConfig } from '../../../lib/distributor/config';
import { AmqpSession } from '../../../lib/rabbitmq/connection';
import { ManagementClient } from '../../../lib/rabbitmq/management';
import { buildDistributor, warningReport } from '../../../lib/wiring/distributor';
import type { PassTrigger } from '../../../lib/work-board/pass-trigger';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';
import { eventually } from '../../harness/eventually';
import { createTestVhost, type TestVhost } from '../../harness/rabbit';
import { memoryStagingRegistry } from '../../harness/staging-registry';

export const STATE_TABLE = 'DistributorStateTable';

/** A vhost, a dynalite with the stack's tables, and helpers to fill, read and drain queues. */
export interface DistributorFixture {
  rabbit: TestVhost;
  dynamo: EmbeddedDynamo;
  session: AmqpSession;
  /** The environment the distributor function would get for this vhost and table. */
  env: Record<string, string>;
  /** The configuration of `env` and `overrides`; `tuning` shortens fixed values (never through the environment). */
  config(overrides?: Record<string, string>, tuning?: Partial<DistributorTuning>): DistributorConfig;
  /**
   * A distributor on this vhost and table; `openChannel` lets a test watch the channels it uses, and
   * `trigger` starts its executions' successors.
   */
  distributor(
    overrides?: Record<string, string>,
    openChannel?: () => Promise<ConfirmChannel>,
    consumptionRate?: (target: string, windowSeconds: number) => Promise<number | undefined>,
    trigger?: PassTrigger,
    tuning?: Partial<DistributorTuning>,
  ): ReturnType<typeof buildDistributor>;
  /** The staging-queue registry the router would keep: `stage` and `record` write it. */
  registry: ReturnType<typeof memoryStagingRegistry>;
  /** Records staging queues in the registry, as the router does before it publishes. */
  record(target: string, staging: readonly string[]): Promise<void>;
  warnings: { message: string; details: Record<string, unknown> }[];
  /** What the report logged at info level (length tuning). */
  infos: { message: string; details: Record<string, unknown> }[];
  withChannel<T>(use: (channel: ConfirmChannel) => Promise<T>): Promise<T>;
  /** Declares a durable queue. */
  declare(name: string, args?: Record<string, unknown>): Promise<void>;
  /**
   * Declares the target (with `targetArgs`; none at all when null) and the staging queues, fills
   * each with its count of messages (ids `${queue}-0…`), and waits until the listing shows them.
   */
  stage(target: string, targetArgs: Record<string, unknown> | null, staging: Record<string, number>): Promise<string[]>;
  /** Publishes `count` persistent messages with message ids `${prefix}-0…`, and waits for the confirms. */
  publish(queue: string, count: number, prefix: string, options?: Options.Publish): Promise<void>;
  /** Exact ready count (AMQP). */
  depth(queue: string): Promise<number>;
  /** Waits until the management listing shows each queue with ready messages (stats lag ~5 s). */
  listed(queues: string[]): Promise<void>;
  /** Takes every ready message off the queue and returns their message ids. */
  drain(queue: string): Promise<string[]>;
  close(): Promise<void>;
}

export async function distributorFixture(): Promise<DistributorFixture> {
  // If one service is missing, stop the other: a dynalite left listening keeps jest from exiting.
  const [vhostResult, dynamoResult] = await Promise.allSettled([createTestVhost(), startDynamo()]);
  if (vhostResult.status === 'rejected' || dynamoResult.status === 'rejected') {
    if (vhostResult.status === 'fulfilled') await vhostResult.value.delete().catch(() => undefined);
    if (dynamoResult.status === 'fulfilled') await dynamoResult.value.stop();
    throw vhostResult.status === 'rejected' ? vhostResult.reason : (dynamoResult as PromiseRejectedResult).reason;
  }
  const [rabbit, dynamo] = [vhostResult.value, dynamoResult.value];
  await dynamo.createTables();
  const session = new AmqpSession(rabbit.amqpUrl);
  const management = new ManagementClient(rabbit.managementUrl, rabbit.vhost);
  const registry = memoryStagingRegistry();
  const record = async (target: string, staging: readonly string[]) => {
    for (const queue of staging) await registry.touch(target, queue, Date.now());
  };
  const warnings: DistributorFixture['warnings'] = [];
  const infos: DistributorFixture['infos'] = [];
  const env = {
    AMQP_URL: rabbit.amqpUrl,
    RABBITMQ_MANAGEMENT_URL: rabbit.managementUrl,
    RABBITMQ_VHOST: rabbit.vhost,
    DISTRIBUTOR_TABLE: STATE_TABLE,
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    // Off unless a test turns them on: these tests count what the planner shares out of a target's
    // max length, with no buffer and no quiet reserve (the seed's division).
    DISTRIBUTOR_BUFFER_HORIZON_MS: '0',
    DISTRIBUTOR_MOVE_PRIORITY: 'keep',
    // No grants unless a test turns them on: a granted target's next pass waits out a revocation.
    DIRECT_ROUTING: 'off',
  };
  const config = (overrides: Record<string, string> = {}, tuning: Partial<DistributorTuning> = {}) =>
    loadDistributorConfig({ ...env, ...overrides }, tuning);

  const withChannel = async <T>(use: (channel: ConfirmChannel) => Promise<T>) => {
    const channel = await session.openConfirmChannel();
    try {
      return await use(channel);
    } finally {
      await channel.close().catch(() => undefined);
    }
  };

  const declare = (name: string, args: Record<string, unknown> = {}) =>
    withChannel((channel) => channel.assertQueue(name, { durable: true, arguments: args })).then(() => undefined);
  const publish: DistributorFixture['publish'] = (queue, count, prefix, options = {}) =>
    withChannel(async (channel) => {
      for (let i = 0; i < count; i++) {
        channel.publish('', queue, Buffer.from(`${prefix}-${i}`), {
          persistent: true,
          messageId: `${prefix}-${i}`,
          ...options,
        });
      }
      await channel.waitForConfirms();
    });
  const listed = async (queues: string[]) => {
    await eventually(
      async () => {
        const listing = await management.listQueues();
        return queues.every((name) => (listing.find((q) => q.name === name)?.messages_ready ?? 0) > 0) || undefined;
      },
      `the management listing to show ${queues.join(', ')} with messages`,
    );
  };

  return {
    rabbit,
    dynamo,
    session,
    env,
    config,
    warnings,
    infos,
    withChannel,
    registry,
    record,
    distributor: (
      overrides = {},
      openChannel = () => session.openConfirmChannel(),
      consumptionRate = (target, windowSeconds) => management.consumptionRate(target, windowSeconds),
      trigger = undefined,
      tuning = {},
    ) =>
      buildDistributor(
        config(overrides, tuning),
        {
          openChannel,
          listQueues: () => management.listQueues(),
          getQueue: (name) => management.getQueue(name),
          listPolicies: () => management.listPolicies(),
          registry,
          doc: dynamo.doc,
          consumptionRate,
          ...(trigger ? { trigger } : {}),
        },
        warningReport(
          (message, details) => warnings.push({ message, details }),
          undefined,
          (message, details) => infos.push({ message, details }),
        ),
      ),
    declare,
    publish,
    listed,
    async stage(target, targetArgs, staging) {
      if (targetArgs) await declare(target, targetArgs);
      await record(target, Object.keys(staging));
      for (const [name, count] of Object.entries(staging)) {
        await declare(name);
        await publish(name, count, name);
      }
      await listed(Object.keys(staging));
      return Object.keys(staging);
    },
    depth: (queue) => withChannel(async (channel) => (await channel.checkQueue(queue)).messageCount),
    drain: (queue) =>
      withChannel(async (channel) => {
        const expected = (await channel.checkQueue(queue)).messageCount;
        const ids: string[] = [];
        if (expected === 0) return ids;
        await new Promise<void>((resolve, reject) => {
          channel
            .consume(
              queue,
              (message) => {
                if (!message) return reject(new Error(`${queue} was deleted while draining`));
                ids.push(String(message.properties.messageId));
                if (ids.length === expected) resolve();
              },
              { noAck: true, consumerTag: 'drain' },
            )
            .catch(reject);
        });
        return ids;
      }),
    async close() {
      await session.close();
      await Promise.allSettled([rabbit.delete(), dynamo.stop()]);
    },
  };
}

/** Counts message ids: how many distinct, and how many seen more than once. */
export function tally(ids: string[]): { unique: Set<string>; duplicates: number } {
  const unique = new Set(ids);
  return { unique, duplicates: ids.length - unique.size };
}

/**
 * A test with a fixture of its own (vhost, dynalite), so scenarios run concurrently: most of their
 * time is waiting for listing stats. Their bound is 3 minutes: a scenario of under 20 s idle took
 * over 60 s beside the file's others on a loaded 2-core machine.
 */
export const scenario = (name: string, body: (f: DistributorFixture) => Promise<void>, timeoutMs: number = 180_000) =>
  it.concurrent(
    name,
    async () => {
      const f = await distributorFixture();
      try {
        await body(f);
      } finally {
        await f.close();
      }
    },
    timeoutMs,
  );
