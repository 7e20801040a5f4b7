import { FairwayError } from '../platform/errors';
import { kindName } from './engine/codec';
import { fillGeneration } from './engine/keys';
import type { DeadLetterRecord, StackRecord } from './engine/stack-record';
import { type DocumentPort, StackStore } from './engine/stack-store';

/** One operation as an operator sees it. */
export interface OperationView {
  sk: string;
  kind: string;
  attempts: number;
  /** Set while an invocation holds the operation. */
  claimedUntil?: string;
  lastError?: string;
  payload: unknown;
}

export interface StackSummary {
  job: string;
  size: number;
  claimed: number;
  byKind: Record<string, number>;
  /** The next operations to run, newest first. */
  top: OperationView[];
  lastFill?: { generation: number; done: boolean; filledAt?: string; error?: string };
}

export interface DeadLetter extends OperationView {
  error: string;
  deadAt: string;
}

/** A payload as stored is JSON text; anything else is shown as it is. */
const readPayload = (payload: unknown): unknown => {
  if (typeof payload !== 'string') return payload;
  try {
    return JSON.parse(payload);
  } catch {
    return payload;
  }
};

const view = (record: StackRecord): OperationView => ({
  sk: record.sk,
  kind: kindName(record.kind),
  attempts: record.attempts,
  ...(record.leaseUntil !== undefined ? { claimedUntil: new Date(record.leaseUntil).toISOString() } : {}),
  ...(record.lastError !== undefined ? { lastError: record.lastError } : {}),
  payload: readPayload(record.payload),
});

/**
 * What an operator (and the CLI) can see and do on a job's stack: its size, its top and its
 * counts by kind; its dead letters; requeue or drop a dead letter. Reading the whole stack
 * pages through it, so `stack()` costs one read per ~1 MB of operations.
 */
export function createCleanupOperator(doc: DocumentPort, table: string) {
  const storeOf = (job: string) => new StackStore(doc, table, job);

  async function stack(job: string, top = 10): Promise<StackSummary> {
    const store = storeOf(job);
    const operations = await store.reads.allOperations();
    const now = Date.now();
    const byKind: Record<string, number> = {};
    for (const op of operations) byKind[kindName(op.kind)] = (byKind[kindName(op.kind)] ?? 0) + 1;
    const shown = await Promise.all(operations.slice(0, top).map((op) => store.reads.get(op.sk)));
    const fill = await store.reads.latestFill();
    return {
      job,
      size: operations.length,
      claimed: operations.filter((op) => op.leaseUntil !== undefined && op.leaseUntil >= now).length,
      byKind,
      top: shown.flatMap((record) => (record ? [view(record)] : [])),
      ...(fill
        ? {
            lastFill: {
              generation: fillGeneration(fill.sk),
              done: fill.done === true,
              ...(fill.filledAt !== undefined ? { filledAt: fill.filledAt } : {}),
              ...(fill.lastError !== undefined ? { error: fill.lastError } : {}),
            },
          }
        : {}),
    };
  }

  async function deadLetters(job: string): Promise<DeadLetter[]> {
    const records = await storeOf(job).deadLetters.list();
    return records.map((record) => ({ ...view(record), error: record.error, deadAt: record.deadAt }));
  }

  async function deadLetter(store: StackStore, job: string, sk: string): Promise<DeadLetterRecord> {
    const dead = await store.deadLetters.get(sk);
    if (!dead) throw new FairwayError(`job ${job} has no dead-lettered operation ${sk}`);
    return dead;
  }

  /** Puts a dead-lettered operation back on top of the stack with its attempts reset; its new key. */
  async function requeue(job: string, sk: string): Promise<{ sk: string }> {
    const store = storeOf(job);
    return { sk: await store.deadLetters.requeue(await deadLetter(store, job, sk)) };
  }

  /** Deletes a dead letter for good. */
  async function drop(job: string, sk: string): Promise<void> {
    const store = storeOf(job);
    await deadLetter(store, job, sk);
    await store.deadLetters.delete(sk);
  }

  return { stack, deadLetters, requeue, drop };
}

export type CleanupOperator = ReturnType<typeof createCleanupOperator>;
