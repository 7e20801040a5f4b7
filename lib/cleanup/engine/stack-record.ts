import { z } from 'zod';
import { FairwayError } from '../../platform/errors';

/**
 * The items of a job's stack as typed records, parsed where they leave DynamoDB (the stack store).
 * The engine's own bookkeeping is typed here; an operation's kind and payload stay opaque until the
 * codec decodes them, so a malformed operation is set aside rather than crashing a step.
 */

/** What a Query of the stack returns per item: enough to choose what to claim, not the payloads. */
export const candidateSchema = z.object({
  sk: z.string(),
  parent: z.string().optional(),
  leaseUntil: z.number().optional(),
});
export type Candidate = z.infer<typeof candidateSchema>;

export const stackRecordSchema = z.object({
  sk: z.string(),
  kind: z.unknown().optional(),
  payload: z.unknown().optional(),
  attempts: z.number().int().default(0),
  owner: z.string().optional(),
  leaseUntil: z.number().optional(),
  parent: z.string().optional(),
  /** Set on a fill once it ran: the record that this generation was filled. */
  done: z.boolean().optional(),
  lastError: z.string().optional(),
  pushSequence: z.number().int().optional(),
  shuffleSeed: z.number().int().optional(),
  filledAt: z.string().optional(),
  pushedAt: z.string().optional(),
  requeuedFrom: z.string().optional(),
});
/** An operation or a fill on the stack. */
export type StackRecord = z.infer<typeof stackRecordSchema>;

export const deadLetterSchema = stackRecordSchema.extend({
  error: z.string(),
  deadAt: z.string(),
  /** The key it was requeued under, recorded before the requeue so a retried requeue reuses it. */
  requeuedAs: z.string().optional(),
});
export type DeadLetterRecord = z.infer<typeof deadLetterSchema>;

export const sequenceSchema = z.object({ value: z.number().int() });

/** A job's mark: epoch milliseconds (compared in the conditional write), and the same time readable. */
export const markSchema = z.object({ at: z.number().int(), time: z.string() });

/** Parses an item read from the cleanup table; an item the engine cannot have written is an error naming its key. */
export function parseItem<T>(schema: z.ZodType<T>, item: Record<string, unknown>, job: string): T {
  const parsed = schema.safeParse(item);
  if (parsed.success) return parsed.data;
  const sk = typeof item.sk === 'string' ? item.sk : '(no sk)';
  throw new FairwayError(
    `item ${sk} of cleanup job ${job} is malformed: ${z.prettifyError(parsed.error)}; fix or delete it in the cleanup table`,
  );
}
