import { BrokerError } from '../platform/errors';
import type { ManagementClient } from '../rabbitmq/management';
import {
  effectiveLengthLimits,
  howLimitsDrop,
  type QueuePolicies,
  type QueueToResolve,
} from '../rabbitmq/queue-policies';

/** The overflow every staging queue is declared with: at a length limit from any policy, the broker nacks, never drops. */
export const STAGING_OVERFLOW = { 'x-overflow': 'reject-publish' } as const;

/**
 * Refuses a staging queue whose effective length limits could drop a waiting message: a limit
 * (from its arguments, a policy or an operator policy) with overflow drop-head. A queue declared
 * with `STAGING_OVERFLOW` passes unless a policy's overflow wins over its argument (a quorum queue)
 * or it was kept with arguments of its own. The vhost's policies are listed once per cache period.
 */
export class StagingLimits {
  private cached?: { policies: QueuePolicies; until: number };
  private listing?: Promise<QueuePolicies>;

  constructor(
    private readonly management: Pick<ManagementClient, 'listPolicies'>,
    private readonly cacheMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Resolves when nothing published to `queue` can be dropped while it waits; else a BrokerError
   * saying why and what to do. `policies` is `this.policies()`, started beside the declare.
   */
  check(queue: QueueToResolve, kept: boolean, policies: QueuePolicies): void {
    const limits = effectiveLengthLimits(queue, policies);
    const drops = howLimitsDrop(limits);
    if (drops === undefined) return;
    const from =
      limits.policies.length > 0 ? ` (policy ${limits.policies.map((p) => JSON.stringify(p)).join(', ')})` : '';
    const remedy = kept
      ? 'It exists without x-overflow reject-publish: delete it once it is empty (the router declares it anew with it), or remove the limit.'
      : 'Remove the length limit or its overflow drop-head from the policy, or set the overflow to reject-publish.';
    throw new BrokerError(
      `the staging queue ${JSON.stringify(queue.name)} could drop waiting messages: ${drops}${from}; nothing is published to it. ${remedy}`,
    );
  }

  /** The vhost's policies and operator policies: cached, and one listing for concurrent misses. */
  async policies(): Promise<QueuePolicies> {
    if (this.cached && this.cached.until > this.now()) return this.cached.policies;
    this.listing ??= this.management
      .listPolicies()
      .then((policies) => {
        this.cached = { policies, until: this.now() + this.cacheMs };
        return policies;
      })
      .finally(() => {
        this.listing = undefined;
      });
    return this.listing;
  }
}
