import { connect } from 'amqplib';
import { z } from 'zod';
import { managementPath } from '../../lib/rabbitmq/api-path';
import { createVhost } from '../../local/vhost';

/** The memory breakdown of `/api/nodes/<node>?memory=true` (rabbit_vm:memory/0), bytes; only the parts read here. */
const memorySchema = z.object({
  memory: z.object({
    queue_procs: z.number(),
    quorum_queue_procs: z.number().default(0),
    total: z.object({ erlang: z.number() }),
  }),
});

export interface BrokerMemory {
  /** Classic and quorum queue processes together. */
  queueProcs: number;
  /** All the Erlang VM's memory. */
  erlang: number;
}

export interface BrokerMemoryPerQueue {
  queues: number;
  arguments: Record<string, unknown>;
  before: BrokerMemory;
  after: BrokerMemory;
  /** (after − before) ÷ queues, bytes: the queue processes alone, and the whole VM (tables, indexes…). */
  queueProcsPerQueue: number;
  erlangPerQueue: number;
}

type Api = <T>(method: string, path: string, body?: unknown) => Promise<T>;

/** The node's memory breakdown now, through the management API. */
export async function brokerMemory(api: Api): Promise<BrokerMemory> {
  const overview = await api<{ node: string }>('GET', '/api/overview');
  const raw = await api<unknown>('GET', `${managementPath('api', 'nodes', overview.node)}?memory=true`);
  const { memory } = memorySchema.parse(raw);
  return { queueProcs: memory.queue_procs + memory.quorum_queue_procs, erlang: memory.total.erlang };
}

/**
 * Declares `queues` empty durable queues with `args` (e.g. a staging queue's, with or without
 * `x-max-priority`) in a vhost of their own, waits `settleMs`, and gives the broker memory they
 * added per queue (docs/router.md "Staging queues and priorities"). The vhost is deleted after. Run
 * the shapes to compare in one process, one after the other, on an otherwise idle broker.
 */
export async function brokerMemoryPerQueue(options: {
  amqpUrl: string;
  managementUrl: string;
  queues: number;
  arguments: Record<string, unknown>;
  settleMs?: number;
  vhost?: string;
}): Promise<BrokerMemoryPerQueue> {
  const vhost = await createVhost(
    options.amqpUrl,
    options.managementUrl,
    options.vhost ?? `fairway-memory-${process.pid}-${Date.now()}`,
  );
  try {
    const before = await brokerMemory(vhost.api);
    const connection = await connect(vhost.amqpUrl);
    // A broker failure rejects the declare below; without a listener it would end the process, vhost and all.
    connection.on('error', () => undefined);
    try {
      const channel = await connection.createChannel();
      for (let i = 0; i < options.queues; i++) {
        await channel.assertQueue(`target»/tenant${i}`, { durable: true, arguments: options.arguments });
      }
    } finally {
      await connection.close();
    }
    await new Promise((resolve) => setTimeout(resolve, options.settleMs ?? 5_000));
    const after = await brokerMemory(vhost.api);
    return {
      queues: options.queues,
      arguments: options.arguments,
      before,
      after,
      queueProcsPerQueue: Math.round((after.queueProcs - before.queueProcs) / options.queues),
      erlangPerQueue: Math.round((after.erlang - before.erlang) / options.queues),
    };
  } finally {
    await vhost.delete();
  }
}
