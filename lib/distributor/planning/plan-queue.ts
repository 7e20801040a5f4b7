/** A non-empty staging queue as the planner sees it. */
export interface PlanQueue {
  name: string;
  /** Messages ready in the queue; the planner never gives a queue more than this. */
  depth: number;
  /**
   * 0–1000 with at most WEIGHT_DECIMALS decimals; a queue of weight 2 gets twice the share of a
   * queue of weight 1 when both are backlogged, a queue of weight 0 gets none (others share its room).
   * In `tenant` mode it weighs the queue within its tenant.
   */
  weight: number;
  /** `tenant` mode: the queue's tenant (every queue naming it shares one part); absent, the queue is a tenant of its own. */
  tenant?: string;
  /** `tenant` mode: the tenant's weight (as `weight`, read from its first queue); absent, 1. */
  tenantWeight?: number;
  /** Work a message of the queue brings, in the fair-by unit (bytes); absent or 0, 1. Used with `fairBy: 'work'`. */
  cost?: number;
}
