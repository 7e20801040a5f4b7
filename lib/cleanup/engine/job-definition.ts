import type { z } from 'zod';

/**
 * The contract between the cleanup engine (lib/cleanup/engine) and the jobs that run on it
 * (lib/cleanup/jobs). SPEC §4: a job owns a stack of operations; each step either fills an
 * empty stack with the job's default operation's children, or takes the top operation,
 * executes it, and pushes what it supplies (in random order).
 */

/** An operation as stored on the stack: a kind and a JSON payload. */
export interface Operation {
  kind: string;
  payload: unknown;
}

/**
 * Times a job keeps beside its stack, by name (e.g. when a pass over something last finished). Each
 * only moves forward: of concurrent or late writes of one mark, the latest time stands.
 */
export interface JobMarks {
  get(name: string): Promise<Date | undefined>;
  /** Records `at` under `name`, unless a later time is there already. */
  advance(name: string, at: Date): Promise<void>;
}

export interface OperationContext {
  job: string;
  /** When true, operations count what they would delete and delete nothing. */
  dryRun: boolean;
  now(): Date;
  marks: JobMarks;
  /**
   * Milliseconds left of the invocation's time budget; absent when the caller set none. An operation
   * that can work in rounds (a range delete) stops starting new rounds when the next one would not fit,
   * and returns a continuation for the rest.
   */
  timeLeftMs?(): number;
}

/**
 * One kind of operation. `execute` either deletes something (and returns nothing) or supplies
 * more operations. It may run more than once for the same payload (an expired claim is taken
 * over), so it must be idempotent: deletes re-check their condition at delete time.
 * A supplier that would produce very many children returns a page of them plus a
 * continuation operation carrying its cursor, so every step stays bounded in memory and time.
 */
export interface OperationKind<P = unknown> {
  /** Validates a payload read back from the stack; a payload that fails is set aside, not run. */
  payload: z.ZodType<P>;
  execute(payload: P, context: OperationContext): Promise<Operation[] | undefined>;
}

export interface JobDefinition {
  /** Stack name, e.g. `registry-timebased-cleanup`. */
  name: string;
  /** Executed when the stack is empty; its children fill the stack. */
  defaultOperation: Operation;
  // biome-ignore lint/suspicious/noExplicitAny: each kind has its own payload type; the engine only routes by name.
  kinds: Readonly<Record<string, OperationKind<any>>>;
  /**
   * Checks, before the job's first step in a container, that what it will touch is there as
   * expected (tables, columns, types); throws a ConfigError otherwise, and no step runs.
   */
  verify?: () => Promise<void>;
}
