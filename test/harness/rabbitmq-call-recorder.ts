import { dirname, join } from 'node:path';
import type { BrokerCall } from './rabbitmq-4-rules';

// amqplib's internals (its package exports hide them): every RPC a channel sends goes through _rpc.
const amqplibLib = join(dirname(require.resolve('amqplib')), 'lib');
const { BaseChannel } = require(join(amqplibLib, 'channel.js')) as {
  BaseChannel: { prototype: { _rpc(method: number, fields: Record<string, any>, ...rest: unknown[]): unknown } };
};
const defs = require(join(amqplibLib, 'defs.js')) as { QueueDeclare: number; BasicQos: number };

const libDir = join(__dirname, '..', '..', 'lib');

/** A call Fairway's own code made, and where in lib/ (the innermost frame there). */
export interface RecordedCall {
  call: BrokerCall;
  site: string;
}

/**
 * Records every queue.declare and basic.qos any channel sends while `use` runs, with the lib/ frame
 * that made it (calls from tests and harnesses, which have no such frame, are left out). Recording
 * at amqplib's RPC layer sees what goes on the wire, whichever channel method a future change uses.
 */
export async function recordBrokerCalls(use: () => Promise<void>): Promise<RecordedCall[]> {
  const recorded: RecordedCall[] = [];
  const original = BaseChannel.prototype._rpc;
  BaseChannel.prototype._rpc = function (this: unknown, method, fields, ...rest) {
    const call = brokerCall(method, fields);
    const site = call && fairwayFrame(new Error().stack ?? '');
    if (call && site) recorded.push({ call, site });
    return original.call(this, method, fields, ...rest);
  };
  try {
    await use();
  } finally {
    BaseChannel.prototype._rpc = original;
  }
  return recorded;
}

function brokerCall(method: number, fields: Record<string, any>): BrokerCall | undefined {
  if (method === defs.QueueDeclare)
    return {
      method: 'queue.declare',
      queue: fields.queue,
      passive: Boolean(fields.passive),
      durable: Boolean(fields.durable),
      exclusive: Boolean(fields.exclusive),
      autoDelete: Boolean(fields.autoDelete),
      arguments: tableEntries(fields.arguments),
    };
  if (method === defs.BasicQos)
    return { method: 'basic.qos', prefetchCount: fields.prefetchCount, global: Boolean(fields.global) };
  return undefined;
}

/** amqplib builds a declare's arguments on a prototype of the caller's: every enumerable key, inherited too. */
function tableEntries(table: Record<string, unknown> | undefined): Record<string, unknown> {
  const entries: Record<string, unknown> = {};
  for (const key in table) if (table[key] !== undefined) entries[key] = table[key];
  return entries;
}

/** `lib/<path>:<line>` of the innermost stack frame in lib/, if any. */
function fairwayFrame(stack: string): string | undefined {
  for (const line of stack.split('\n')) {
    const at = line.indexOf(libDir);
    if (at < 0) continue;
    const match = /^(.+?\.ts):(\d+)/.exec(line.slice(at + libDir.length + 1));
    if (match) return `lib/${match[1]}:${match[2]}`;
  }
  return undefined;
}
