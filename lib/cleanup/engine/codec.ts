import { z } from 'zod';
import type { JobDefinition, Operation, OperationKind } from './job-definition';
import { MAX_CHILDREN_PER_PUSH, operationKey } from './keys';
import { seededRandom, shuffled } from './random';

/**
 * The pure rules between operations in memory and items on the stack: validating what a
 * supplier returns before anything is written, placing children in random order, and
 * validating what is read back before anything runs.
 */

/** A supplier returned something that cannot go on the stack; the supplier's step fails with it. */
export class RejectedChildError extends Error {
  override readonly name = 'RejectedChildError';
}

/** A child ready to be stored: its kind and its payload as JSON text. */
export interface EncodedOperation {
  kind: string;
  payload: string;
}

/** Where a parent's children go: its own push sequence, and the seed of their shuffle (kept so a retry places them alike). */
export interface PushPlan {
  sequence: number;
  shuffleSeed: number;
}

export interface PlacedOperation extends EncodedOperation {
  sk: string;
  parent: string;
}

type Kinds = JobDefinition['kinds'];

const kindOf = (kinds: Kinds, name: string): OperationKind | undefined =>
  Object.hasOwn(kinds, name) ? kinds[name] : undefined;

/**
 * Validates and encodes the children `supplier` returned. The payload cap keeps every item
 * under DynamoDB's 400 KB limit by construction: a child over it is an error naming its kind and size.
 */
export function encodeChildren(
  supplier: string,
  children: readonly Operation[],
  kinds: Kinds,
  maxPayloadBytes: number,
): EncodedOperation[] {
  if (children.length > MAX_CHILDREN_PER_PUSH) {
    throw new RejectedChildError(
      `operation kind "${supplier}" supplied ${children.length} children; at most ${MAX_CHILDREN_PER_PUSH} ` +
        'fit one push: return a page of them and a continuation operation',
    );
  }
  return children.map((child, index) => {
    const kind = kindOf(kinds, child.kind);
    if (!kind)
      throw new RejectedChildError(
        `operation kind "${supplier}" supplied child ${index} of unknown kind "${child.kind}"`,
      );
    const checked = kind.payload.safeParse(child.payload);
    if (!checked.success) {
      throw new RejectedChildError(
        `operation kind "${supplier}" supplied child ${index} of kind "${child.kind}" with an invalid payload: ${z.prettifyError(checked.error)}`,
      );
    }
    const payload = JSON.stringify(child.payload) as string | undefined;
    if (payload === undefined) {
      throw new RejectedChildError(
        `operation kind "${supplier}" supplied child ${index} of kind "${child.kind}" whose payload is not JSON`,
      );
    }
    const bytes = Buffer.byteLength(payload);
    if (bytes > maxPayloadBytes) {
      throw new RejectedChildError(
        `operation kind "${supplier}" supplied child ${index} of kind "${child.kind}" whose payload is ${bytes} bytes; ` +
          `the cap is ${maxPayloadBytes} bytes (a DynamoDB item holds at most 400 KB): supply smaller batches`,
      );
    }
    return { kind: child.kind, payload };
  });
}

/** Shuffles the children with the plan's seed and gives each a key under the plan's sequence. */
export function placeChildren(
  children: readonly EncodedOperation[],
  plan: PushPlan,
  parent: string,
): PlacedOperation[] {
  return shuffled(children, seededRandom(plan.shuffleSeed)).map((child, position) => ({
    ...child,
    sk: operationKey(plan.sequence, position),
    parent,
  }));
}

const storedOperation = z.object({ sk: z.string(), kind: z.string(), payload: z.string() });

export type DecodedOperation =
  | { ok: true; kind: string; operation: OperationKind; payload: unknown }
  | { ok: false; kind: string; error: string };

/** An operation's kind as stored, for logs and the operator; a malformed item may have none. */
export const kindName = (kind: unknown): string => (typeof kind === 'string' ? kind : '(none)');

/** Reads an item back: a malformed item, an unknown kind or an invalid payload is an error to set aside, never a crash. */
export function decodeOperation(item: Record<string, unknown>, kinds: Kinds): DecodedOperation {
  const stored = storedOperation.safeParse(item);
  if (!stored.success) {
    return {
      ok: false,
      kind: kindName(item.kind),
      error: `stored item is malformed: ${z.prettifyError(stored.error)}`,
    };
  }
  const { kind: name, payload: text } = stored.data;
  const operation = kindOf(kinds, name);
  if (!operation) return { ok: false, kind: name, error: `unknown operation kind "${name}"` };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, kind: name, error: `payload of kind "${name}" is not valid JSON` };
  }
  const payload = operation.payload.safeParse(raw);
  if (!payload.success) {
    return { ok: false, kind: name, error: `payload of kind "${name}" is invalid: ${z.prettifyError(payload.error)}` };
  }
  return { ok: true, kind: name, operation, payload: payload.data };
}
