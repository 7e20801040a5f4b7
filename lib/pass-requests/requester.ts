import { randomUUID } from 'node:crypto';
import type { LeaseStore, PassRequestOutcome } from './lease-store';
import { MAX_PASS_DELAY_MS, type PassTrigger } from './pass-trigger';

/** Asks for a distribution pass over one target, debounced by its lease item (docs/distributor.md "Passes on demand"). */
export type RequestPass = (target: string, delayMs: number) => Promise<PassRequestOutcome | 'off'>;

export interface PassRequesterDeps {
  leases: LeaseStore;
  trigger: PassTrigger;
  /** How long a started pass may take to reach the lease before a new request presumes it lost. */
  graceMs: number;
  now?: () => number;
}

/**
 * Registers the request on the lease item and starts a pass only when none holds or awaits the
 * lease, so that a storm of requests starts at most one pass per target at a time. A start that
 * fails drops its pending mark, so the next request tries again at once.
 */
export function passRequester({ leases, trigger, graceMs, now = Date.now }: PassRequesterDeps): RequestPass {
  return async (target, askedMs) => {
    // Bounded here too, so that a pending mark never blocks the target's requests for long.
    const delayMs = Math.min(askedMs, MAX_PASS_DELAY_MS);
    const requestId = randomUUID();
    const at = now();
    const outcome = await leases.requestPass(target, requestId, at, at + delayMs + graceMs);
    if (outcome !== 'start') return outcome;
    try {
      await trigger.start({ source: 'fairway.pass-request', requestId, target, delayMs });
    } catch (error) {
      await leases.dropRequest(target, requestId).catch(() => undefined);
      throw error;
    }
    return outcome;
  };
}

/** Passes on the schedule alone (no DISTRIBUTOR_FUNCTION_NAME). */
export const schedulesOnly: RequestPass = async () => 'off';
