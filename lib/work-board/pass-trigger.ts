import { z } from 'zod';
import { InvalidEventError } from '../platform/errors';

/** The event that starts a distributor execution on demand (docs/distributor.md "Run model"). */
export interface WorkEvent {
  source: 'fairway.work';
}

/**
 * The event of the earlier run model, one pass over one target; still accepted (an invoke queued
 * before a deploy): its target is written on the work board and the invocation runs as an execution.
 */
export interface PassRequestEvent {
  source: 'fairway.pass-request';
  requestId: string;
  target: string;
  /** Ignored now: the board's due times replace the wait inside the invocation. */
  delayMs: number;
}

export type DistributorEvent = WorkEvent | PassRequestEvent;

/** Starts a distributor execution, without waiting for it (Lambda async invoke). */
export interface PassTrigger {
  start(event: WorkEvent): Promise<void>;
}

export const WORK_EVENT: WorkEvent = { source: 'fairway.work' };

const passRequestEvent = z.strictObject({
  source: z.literal('fairway.pass-request'),
  requestId: z.string().min(1),
  target: z.string().min(1),
  delayMs: z.number().int().min(0),
});
const workEvent = z.strictObject({ source: z.literal('fairway.work') });

/**
 * A work event or an earlier pass request, or undefined for any other event (the schedule's); a
 * malformed one is an InvalidEventError naming the field.
 */
export function parseDistributorEvent(event: unknown): DistributorEvent | undefined {
  const source = (event as { source?: unknown } | null)?.source;
  const schema =
    source === 'fairway.work' ? workEvent : source === 'fairway.pass-request' ? passRequestEvent : undefined;
  if (schema === undefined) return undefined;
  const parsed = schema.safeParse(event);
  if (parsed.success) return parsed.data as DistributorEvent;
  throw new InvalidEventError(
    parsed.error.issues.map((issue) => ({ field: issue.path.join('.') || '(event)', reason: issue.message })),
  );
}
