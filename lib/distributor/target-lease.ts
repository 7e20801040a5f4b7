import { LEASE_MS, LEASE_RENEW_MS, type LeaseStore } from './stores/lease-store';

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
