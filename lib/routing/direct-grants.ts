import { type DirectRoutingSettings, grantUsable } from '../work-board/grants';
import { directChoice, type GrantRead, grantedTargets } from './direct-routes';

/**
 * A read that found no usable grant is taken again after this long, not after the read window: an
 * execution grants a target just after the pass a staged batch asked for, and a router that went
 * on staging on its older read would ask for another pass, which revokes the new grant (the first
 * light-load bench lost a third of its messages to staging that way).
 */
export const UNGRANTED_RECHECK_MS = 100;

/**
 * A usable grant read is used for new decisions only this part of the read window: the rest is the
 * batch's headroom between its decision and its publish (the depth reads). Decided at the window's
 * edge, a slow depth read left the read stale and staged the batch, whose pass request revoked the
 * grant (a light-load bench saw a revocation about every 15 s when the priority checks came between).
 */
export const GRANT_REUSE_FRACTION = 0.5;

/** What direct routing reads: grants from the work board, ready depths from the broker. */
export interface DirectRoutingDeps {
  settings: DirectRoutingSettings;
  /** The targets' grants on the work board (epoch ms until), one consistent read (DynamoWorkBoard.grants). */
  grants(targets: readonly string[]): Promise<ReadonlyMap<string, number>>;
  /** Exact ready depths over AMQP; undefined for a missing target (lib/rabbitmq/ready-counts.ts). */
  depths(targets: readonly string[]): Promise<ReadonlyMap<string, number | undefined>>;
  now?: () => number;
}

/**
 * A router container's direct routing (docs/router.md "Direct routing"): grants cached per target for
 * half of the read window (DIRECT_ROUTING_WINDOWS.readMs) from when their read was sent (so light load costs at most two reads
 * a container a second), the absence of one for UNGRANTED_RECHECK_MS; depths read per batch for the
 * granted targets only.
 */
export class DirectGrants {
  private readonly cache = new Map<string, GrantRead>();
  private readonly now: () => number;

  constructor(private readonly deps: DirectRoutingDeps) {
    this.now = deps.now ?? Date.now;
  }

  get settings(): DirectRoutingSettings {
    return this.deps.settings;
  }

  /**
   * For the batch's staged messages (their targets, in batch order), the read time of the grant each
   * one goes direct on, or undefined to stage it. A read that fails stages all: the error is thrown
   * for the caller to count, never to fail records.
   */
  async choose(itemTargets: readonly string[]): Promise<(number | undefined)[]> {
    const { settings } = this.deps;
    const targets = [...new Set(itemTargets)];
    const at = this.now();
    const stale = targets.filter((t) => {
      const cached = this.cache.get(t);
      if (cached === undefined) return true;
      const usable = grantUsable(cached, at, settings);
      const reuseMs = usable ? settings.readMs * GRANT_REUSE_FRACTION : Math.min(settings.readMs, UNGRANTED_RECHECK_MS);
      return at - cached.readAt >= reuseMs;
    });
    if (stale.length > 0) {
      // The send time, not the answer's: a revocation the read just missed came after it.
      const readAt = this.now();
      const grants = await this.deps.grants(stale);
      for (const t of stale) this.cache.set(t, { until: grants.get(t), readAt });
    }
    const granted = grantedTargets(targets, this.cache, this.now(), settings);
    if (granted.length === 0) return itemTargets.map(() => undefined);
    const depths = await this.deps.depths(granted);
    const chosen = directChoice(itemTargets, depths, settings.maxDepth);
    return itemTargets.map((t, i) => (chosen[i] ? this.cache.get(t)!.readAt : undefined));
  }
}
