import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type ChannelModel, connect } from 'amqplib';
import { localDynamoClients } from '../../local/embedded-dynamo';
import { type BenchVhost, createBenchVhost } from './services';
import { type SideProcess, startSideProcess } from './side-process';

/** DynamoDB operations that write, and that read (for the cost table). */
export const dynamoWrites = ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems'];
export const dynamoReads = ['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems'];

/** The requests the bench's DynamoDB served since the last reset. */
export interface DynamoCounts {
  byOperation: Map<string, number>;
  /** Requests of these operations. */
  count(...operations: string[]): number;
  total: number;
  /** Requests by operation of each caller: the first path segment of the endpoint it was given (callerEndpoint). */
  byCaller: Map<string, Map<string, number>>;
  /** Per caller, requests by item kind (fleet-metrics.ts `dynamoRequestKind`) and operation, tab-separated, and of them those whose condition failed. */
  byKind: Map<string, Map<string, { requests: number; conditionFailed: number }>>;
  /** Milliseconds dynalite spent serving them, summed (overlapping requests each count). */
  servedMs: number;
}

export interface BenchDynamo {
  /** Through the delay proxy when there is a delay. */
  endpoint: string;
  client: DynamoDBClient;
  doc: DynamoDBDocumentClient;
  counts(): Promise<DynamoCounts>;
  reset(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * dynalite with the deployed tables in a process of its own (not the bench's: the emulator's
 * work would otherwise share the event loop it is timed against), counting requests on the
 * server, behind a delay proxy when `delayMs` > 0.
 */
export async function startBenchDynamo(delayMs: number): Promise<BenchDynamo> {
  const server = await startSideProcess<{ port: number }>('bench/lib/dynamo-server.ts', []);
  const proxy = delayMs > 0 ? await startDelayServer(delayMs, [`127.0.0.1:${server.ready.port}`]) : undefined;
  const endpoint = `http://127.0.0.1:${proxy?.ready.ports[0] ?? server.ready.port}`;
  const { client, doc } = localDynamoClients(endpoint);
  return {
    endpoint,
    client,
    doc,
    async counts() {
      const { byOperation, byCaller, byKind, servedMs } = await server.request<{
        byOperation: Record<string, number>;
        byCaller: Record<string, Record<string, number>>;
        byKind: Record<string, Record<string, { requests: number; conditionFailed: number }>>;
        servedMs: number;
      }>('counts');
      const map = new Map(Object.entries(byOperation));
      const count = (...operations: string[]) => operations.reduce((sum, op) => sum + (map.get(op) ?? 0), 0);
      const callers = new Map(Object.entries(byCaller).map(([caller, ops]) => [caller, new Map(Object.entries(ops))]));
      const kinds = new Map(Object.entries(byKind).map(([caller, of]) => [caller, new Map(Object.entries(of))]));
      return { byOperation: map, byCaller: callers, byKind: kinds, count, total: count(...map.keys()), servedMs };
    },
    reset: () => server.request('reset'),
    async stop() {
      client.destroy();
      await proxy?.stop();
      await server.stop();
    },
  };
}

/** `endpoint` with `/<caller>` as its path: the server counts that client's requests apart (DynamoCounts.byCaller). */
export const callerEndpoint = (endpoint: string, caller: string): string => `${endpoint.replace(/\/$/, '')}/${caller}`;

/** A vhost whose AMQP and management URLs go through a delay proxy (the vhost's own when `delayMs` is 0). */
export async function delayedVhost(
  vhost: BenchVhost,
  delayMs: number,
): Promise<BenchVhost & { stopDelay(): Promise<void> }> {
  if (delayMs <= 0) return { ...vhost, stopDelay: async () => undefined };
  const amqp = new URL(vhost.amqpUrl);
  const management = new URL(vhost.managementUrl);
  const proxy = await startDelayServer(delayMs, [
    `${amqp.hostname}:${amqp.port || 5672}`,
    `${management.hostname}:${management.port || 80}`,
  ]);
  amqp.hostname = '127.0.0.1';
  amqp.port = String(proxy.ready.ports[0]);
  management.hostname = '127.0.0.1';
  management.port = String(proxy.ready.ports[1]);
  return {
    ...vhost,
    amqpUrl: amqp.toString(),
    managementUrl: management.toString(),
    stopDelay: () => proxy.stop(),
  };
}

/**
 * A bench's vhost and dynalite, both behind ~`delayMs` proxies, and a connection of the bench's own
 * straight to the vhost. Each goes into `closers` as it is made (last made, first closed), so that
 * a failure part-way leaves nothing behind once the caller runs them.
 */
export async function startDelayedServices(
  bench: string,
  delayMs: number,
  closers: (() => Promise<unknown>)[],
): Promise<{ dynamo: BenchDynamo; delayed: BenchVhost; model: ChannelModel }> {
  process.env.AWS_ACCESS_KEY_ID ??= 'local'; // dynalite and the local endpoint accept any credentials
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
  const vhost = await createBenchVhost(bench);
  closers.unshift(() => vhost.delete());
  const dynamo = await startBenchDynamo(delayMs);
  closers.unshift(() => dynamo.stop());
  const delayed = await delayedVhost(vhost, delayMs);
  closers.unshift(() => delayed.stopDelay());
  const model = await connect(vhost.amqpUrl);
  closers.unshift(() => model.close().catch(() => undefined));
  return { dynamo, delayed, model };
}

const startDelayServer = (delayMs: number, upstreams: string[]): Promise<SideProcess<{ ports: number[] }>> =>
  startSideProcess('bench/lib/delay-server.ts', [String(delayMs), ...upstreams]);
