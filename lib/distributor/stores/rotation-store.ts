import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { type DocumentPort, isConditionFailure, retryingThrottled } from '../../platform/aws';
import { FairwayError } from '../../platform/errors';

/** What a target's plan carries from pass to pass (docs/distributor.md "Plan"). */
export interface RotationState {
  /** The last queue (`tenant` planner: tenant) that got a remainder unit. */
  cursor?: string;
  /** Per tenant, the last of its queues that got a remainder unit of its part. */
  innerCursors?: Record<string, string>;
  /** Per backlogged tenant, the work it is owed (fair by work: planning/tenant-backlog.ts). */
  deficits?: Record<string, number>;
  /** Per tenant, the declared cost of a message learned from those moved (fair by a declared cost). */
  costs?: Record<string, number>;
}

/** Where a target's rotation of remainder units stands. */
export interface Rotation extends RotationState {
  /** Optimistic lock: a write succeeds only over the version it read. */
  version: number;
}

/** The planner's rotation cursor per target, kept between passes. */
export interface RotationStore {
  readRotation(target: string): Promise<Rotation>;
  /** False if another pass wrote the rotation since `read` (the write is then dropped). */
  writeRotation(target: string, next: RotationState, read: Rotation): Promise<boolean>;
}

const rotationKey = (target: string) => `rotation#${target}`;

/** A rotation item as the store writes it; anything else in the table is a fault, not a value to coerce. */
const rotationItem = z.object({
  cursor: z.string().optional(),
  innerCursors: z.record(z.string(), z.string()).optional(),
  deficits: z.record(z.string(), z.number()).optional(),
  costs: z.record(z.string(), z.number().positive()).optional(),
  version: z.number().int().min(0),
});

/** The rotation as the planner takes it (TargetMeasurement). */
export const rotationToPlan = ({ cursor, innerCursors, deficits, costs }: RotationState) => ({
  ...(cursor === undefined ? {} : { rotationCursor: cursor }),
  ...(innerCursors ? { innerCursors } : {}),
  ...(deficits ? { deficits } : {}),
  ...(costs ? { costs } : {}),
});

/**
 * The rotation a plan leaves to store, or undefined when it is what was read (no write: the stored
 * one is what the next pass reads): the
 * plan's cursor when it moved it, else the read one; its inner cursors, deficits and costs as they are.
 */
export function rotationToStore(
  plan: {
    rotationCursor?: string;
    innerCursors?: Record<string, string>;
    deficits?: Record<string, number>;
    costs?: Record<string, number>;
  },
  read: RotationState,
): RotationState | undefined {
  const cursor = plan.rotationCursor ?? read.cursor;
  const next: RotationState = {
    ...(cursor === undefined ? {} : { cursor }),
    ...(plan.innerCursors ? { innerCursors: plan.innerCursors } : {}),
    ...(plan.deficits ? { deficits: plan.deficits } : {}),
    ...(plan.costs ? { costs: plan.costs } : {}),
  };
  const same =
    next.cursor === read.cursor &&
    sameRecord(next.innerCursors, read.innerCursors) &&
    sameRecord(next.deficits, read.deficits) &&
    sameRecord(next.costs, read.costs);
  return same ? undefined : next;
}

function sameRecord(a: Record<string, unknown> | undefined, b: Record<string, unknown> | undefined): boolean {
  const [left, right] = [Object.entries(a ?? {}), b ?? {}];
  return left.length === Object.keys(right).length && left.every(([k, v]) => Object.hasOwn(right, k) && right[k] === v);
}

/** RotationStore in the DistributorStateTable (key `rotation#<target>`); every call retried when throttled. */
export class DynamoRotationStore implements RotationStore {
  private readonly doc: DocumentPort;

  constructor(
    doc: DocumentPort,
    private readonly table: string,
  ) {
    this.doc = retryingThrottled(doc);
  }

  async readRotation(target: string): Promise<Rotation> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: { pk: rotationKey(target) }, ConsistentRead: true }),
    );
    if (Item === undefined) return { version: 0 };
    const parsed = rotationItem.safeParse(Item);
    if (!parsed.success) {
      const fields = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
      throw new FairwayError(
        `The rotation item ${rotationKey(target)} in ${this.table} is malformed (${fields}); delete it and the next pass starts a new rotation.`,
      );
    }
    return parsed.data;
  }

  async writeRotation(target: string, next: RotationState, read: Rotation): Promise<boolean> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: { pk: rotationKey(target), ...next, version: read.version + 1 },
          ConditionExpression: 'attribute_not_exists(pk) OR version = :version',
          ExpressionAttributeValues: { ':version': read.version },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}

/** The length each tuned target used last, so that the next pass steps on from it. */
export interface TunedLengthStore {
  read(target: string): Promise<number | undefined>;
  /** Written under the target's lease: no other pass writes it meanwhile. */
  write(target: string, length: number, nowMs: number): Promise<void>;
}

const tunedKey = (target: string) => `tuned-length#${target}`;
const tunedItem = z.object({ length: z.number().int().min(0) });

/** TunedLengthStore in the distributor's state table, one item per target. */
export class DynamoTunedLengthStore implements TunedLengthStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async read(target: string): Promise<number | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: { pk: tunedKey(target) }, ConsistentRead: true }),
    );
    if (Item === undefined) return undefined;
    const parsed = tunedItem.safeParse(Item);
    if (!parsed.success) {
      throw new FairwayError(
        `The item ${tunedKey(target)} in ${this.table} has no whole-number length; delete it and tuning starts again from the untuned length.`,
      );
    }
    return parsed.data.length;
  }

  async write(target: string, length: number, nowMs: number): Promise<void> {
    await this.doc.send(
      new PutCommand({ TableName: this.table, Item: { pk: tunedKey(target), length, updatedAt: nowMs } }),
    );
  }
}
