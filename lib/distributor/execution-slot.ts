import type { DynamoWorkBoard } from '../work-board/work-board-store';
import { LEASE_MS, LEASE_RENEW_MS } from './stores/lease-store';

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
