import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import {
  type DocumentPort,
  isConditionFailure,
  isServerFault,
  retryingThrottled,
  throttlingBackOff,
  withBackOff,
} from '../../platform/aws';
import { FairwayError } from '../../platform/errors';
import type { DynamoWorkBoard } from '../../work-board/work-board-store';

/**
 * How long a lease (and an execution's slot on the work board) lasts past its last renewal: the
 * holder renews it while it works (LEASE_RENEW_MS before it lapses), so a killed execution's
 * targets are taken again within seconds, not at its invocation's timeout.
 */
export const LEASE_MS = 4_000;
/** A lease with less than this left is renewed before the holder moves into its target again. */
export const LEASE_RENEW_MS = 1_500;

/**
 * One lease per target (docs/distributor.md "Run model"): the execution that serves a target holds
 * it, so one pass at a time moves into it whichever execution runs.
 */
export interface LeaseStore {
  /**
   * True if `owner` now holds the target until `expiresAt`: no one held it, their lease expired
   * before `now`, or `owner` held it already (a renewal).
   */
  acquireLease(target: string, owner: string, now: number, expiresAt: number): Promise<boolean>;
  /** Gives the lease back, if `owner` still holds it. */
  releaseLease(target: string, owner: string): Promise<void>;
}

const leaseKey = (target: string) => `lease#${target}`;

/** The lease item: its holder. */
const leaseItem = z.object({ owner: z.string().optional(), expiresAt: z.number().optional() });

const LEASE_FREE = '(attribute_not_exists(#owner) OR expiresAt < :now OR #owner = :owner)';

/**
 * LeaseStore in the DistributorStateTable (key `pk`), single-item conditional writes only.
 * Every call is retried with back-off when throttled (nothing was written). Lease writes are also
 * retried after a 5xx: they name their owner, so a retried acquire whose condition fails reads the
 * lease back and knows whether its earlier try won, and a retried release removes only its own.
 */
export class DynamoLeaseStore implements LeaseStore {
  private readonly doc: DocumentPort;

  constructor(
    doc: DocumentPort,
    private readonly table: string,
  ) {
    this.doc = retryingThrottled(doc);
  }

  async acquireLease(target: string, owner: string, now: number, expiresAt: number): Promise<boolean> {
    let ambiguous = false;
    const update = new UpdateCommand({
      TableName: this.table,
      Key: { pk: leaseKey(target) },
      UpdateExpression: 'SET #owner = :owner, expiresAt = :expiresAt, acquiredAt = :now',
      ConditionExpression: LEASE_FREE,
      ExpressionAttributeNames: { '#owner': 'owner' },
      ExpressionAttributeValues: { ':owner': owner, ':expiresAt': expiresAt, ':now': now },
    });
    const acquired = await withBackOff(
      () =>
        this.conditional(update).catch((error: unknown) => {
          ambiguous ||= isServerFault(error);
          throw error;
        }),
      isServerFault,
      throttlingBackOff,
    );
    if (acquired || !ambiguous) return acquired;
    // An earlier try answered 5xx: its update may be what the condition now refuses.
    const item = await this.readLease(target);
    return item.owner === owner && item.expiresAt === expiresAt;
  }

  async releaseLease(target: string, owner: string): Promise<void> {
    // A retry after a 5xx that had released finds the lease gone, and its condition fails: done.
    await withBackOff(
      () =>
        this.conditional(
          new UpdateCommand({
            TableName: this.table,
            Key: { pk: leaseKey(target) },
            UpdateExpression: 'REMOVE #owner, expiresAt, acquiredAt',
            ConditionExpression: '#owner = :owner',
            ExpressionAttributeNames: { '#owner': 'owner' },
            ExpressionAttributeValues: { ':owner': owner },
          }),
        ),
      isServerFault,
      throttlingBackOff,
    );
  }

  private async readLease(target: string) {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: { pk: leaseKey(target) }, ConsistentRead: true }),
    );
    const parsed = leaseItem.safeParse(Item ?? {});
    if (!parsed.success) {
      const fields = parsed.error.issues.map((issue) => issue.path.join('.')).join(', ');
      throw new FairwayError(
        `The lease item ${leaseKey(target)} in ${this.table} is malformed (${fields}); delete it and the next pass starts afresh.`,
      );
    }
    return parsed.data;
  }

  private async conditional(command: UpdateCommand): Promise<boolean> {
    try {
      await this.doc.send(command);
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}

/**
 * Takes a target's lease once per execution and renews it when near its end (LEASE_MS); a target
 * leased by another execution is theirs to serve. A lease taken now may come after another
 * execution granted the target since this one read the board (only a lease holder grants, and it
 * grants before it gives the lease back): such a target is `granted`, for the execution to revoke
 * and wait out.
 */
export function leaseTaker(
  leases: LeaseStore,
  grantOf: ((target: string) => Promise<number | undefined>) | undefined,
  now: () => number,
) {
  return async function acquire(
    target: string,
    pass: { owner: string; held: Map<string, number>; rotations: Map<string, unknown> },
  ): Promise<'held' | 'leased-elsewhere' | 'granted'> {
    const heldUntil = pass.held.get(target);
    if (heldUntil !== undefined && heldUntil - now() > LEASE_RENEW_MS) return 'held';
    const until = now() + LEASE_MS;
    if (!(await leases.acquireLease(target, pass.owner, now(), until))) {
      // Lapsed and taken by another execution: its rotation may have moved on.
      pass.held.delete(target);
      pass.rotations.delete(target);
      return 'leased-elsewhere';
    }
    pass.held.set(target, until);
    if (heldUntil !== undefined) return 'held';
    const grant = grantOf ? await grantOf(target) : undefined;
    return grant !== undefined && grant > now() ? 'granted' : 'held';
  };
}

/**
 * How often a round checks its slot: it is renewed within LEASE_RENEW_MS of its end. A round over
 * many busy targets (each refilled for up to a stint) outlasts the slot's LEASE_MS, and a slot
 * that lapsed mid-round let routers start another execution beside the running one.
 */
export const SLOT_CHECK_MS = 500;

export interface SlotKeeperDeps {
  board: Pick<DynamoWorkBoard, 'renewSlot'>;
  slot: number;
  /** Until when the claim holds it. */
  until: number;
  /** The invocation's end: the slot is never held past it. */
  endsAt: number;
  now: () => number;
}

/**
 * An execution's slot on the work board (docs/distributor.md "Run model"), renewed near its end so
 * that it lapses within LEASE_MS of the execution stopping. Renewals run one at a time: each is
 * conditional on the until the last one wrote.
 */
export function slotKeeper({ board, slot, until, endsAt, now }: SlotKeeperDeps) {
  let heldUntil = until;
  let renewing: Promise<boolean> | undefined;
  let lost = false;

  /** Renews the slot when near its end; false once another execution has taken it. */
  function keep(): Promise<boolean> {
    if (renewing) return renewing;
    if (lost) return Promise.resolve(false);
    const at = now();
    if (heldUntil - at > LEASE_RENEW_MS) return Promise.resolve(true);
    const next = Math.min(at + LEASE_MS, endsAt);
    renewing = board
      .renewSlot(slot, heldUntil, at, next)
      .then((kept) => {
        if (kept) heldUntil = next;
        else lost = true;
        return kept;
      })
      .finally(() => {
        renewing = undefined;
      });
    return renewing;
  }

  return {
    keep,
    /**
     * Runs `work` (a round's pass) with the slot renewed as it goes. A renewal that fails is tried
     * again at the next check, and the step after the round tries once more before giving up. The
     * last renewal is awaited, so none lands after the slot is given back.
     */
    async during<T>(work: () => Promise<T>): Promise<T> {
      const check = setInterval(() => void keep().catch(() => undefined), SLOT_CHECK_MS);
      try {
        return await work();
      } finally {
        clearInterval(check);
        await renewing?.catch(() => undefined);
      }
    },
  };
}

export type SlotKeeper = ReturnType<typeof slotKeeper>;
