import { z } from 'zod';
import { InvalidEventError } from '../errors';

/** The event of a distributor invocation started on demand (by the router, or by a pass for its follow-up). */
export interface PassRequestEvent {
  source: 'fairway.pass-request';
  /** The request that started this pass (its pending mark on the lease item). */
  requestId: string;
  target: string;
  /** Wait this long before the pass (a follow-up gives the workers time to make room). */
  delayMs: number;
}

/**
 * The longest a requested pass waits before it runs: the largest follow-up delay the distributor
 * can be configured to (DISTRIBUTOR_FOLLOW_UP_MAX_DELAY_MS, at most 30 s). A request asking for
 * more waits this long (the wait holds an invocation, and reserved concurrency is small).
 */
export const MAX_PASS_DELAY_MS = 30_000;

/** Starts a distributor invocation for a request, without waiting for its pass (Lambda async invoke). */
export interface PassTrigger {
  start(event: PassRequestEvent): Promise<void>;
}

const passRequestEvent = z.strictObject({
  source: z.literal('fairway.pass-request'),
  requestId: z.string().min(1),
  target: z.string().min(1),
  delayMs: z.number().int().min(0),
});

/** A pass request, or undefined for any other event (the schedule's); a malformed request is an InvalidEventError. */
export function parsePassRequestEvent(event: unknown): PassRequestEvent | undefined {
  if ((event as { source?: unknown } | null)?.source !== 'fairway.pass-request') return undefined;
  const parsed = passRequestEvent.safeParse(event);
  if (parsed.success) return parsed.data;
  throw new InvalidEventError(
    parsed.error.issues.map((issue) => ({ field: issue.path.join('.') || '(event)', reason: issue.message })),
  );
}
