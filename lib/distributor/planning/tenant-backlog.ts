import { DISCRIMINATOR_SEPARATOR, parseStagingQueueName, STAGING_SEPARATOR } from '../../staging/staging-names';
import type { FairBy } from './fair-by';
import type { PlannerMode } from './planner';
import type { QueueWeight } from './weights';

/**
 * The tenant a staging queue is planned under: `target»/tenant` for `target»/tenant[/workflow…]`.
 * A tenant-less queue `target»/workflow` reads as tenant `workflow`, as the tenant controls read it
 * (the name cannot tell them apart); a name without a discriminator is a tenant of its own.
 */
export function tenantKey(queueName: string): string {
  const parts = parseStagingQueueName(queueName);
  return parts?.tenant === undefined
    ? queueName
    : parts.target + STAGING_SEPARATOR + DISCRIMINATOR_SEPARATOR + parts.tenant;
}

interface Sizes {
  planner: PlannerMode;
  fairBy?: FairBy;
  /** Body bytes of a message per staging queue, as listed. */
  queueBytes?: Readonly<Record<string, number>>;
  /** Body bytes of a message over the target's staging queues, as listed (0 when unknown). */
  stagedMessageBytes: number;
  /** Declared cost: per tenant, the cost of a message learned from those moved (planning/work-charge.ts). */
  costs?: Readonly<Record<string, number>>;
}

/**
 * The non-empty staging queues as the planner takes them: each with its tenant, its weight for the
 * planner (`tenant`: within its tenant, 0 when the tenant weighs 0; else its own), its tenant's
 * weight, its cost when fair by work (bytes or declared), and `backlog`: what its tenant's served queues hold on the
 * target, so that quiet is a tenant's property, not a queue's. Pure.
 */
export function stagedQueues(
  staging: readonly { name: string; depth: number }[],
  sizes: Sizes,
  weight: (queue: string) => QueueWeight,
) {
  const tenantMode = sizes.planner === 'tenant';
  const cost = costOf(sizes);
  const queues = staging
    .filter((q) => q.depth > 0)
    .map((q) => {
      const w = weight(q.name);
      return {
        ...q,
        weight: tenantMode ? (w.tenant > 0 ? w.workflow : 0) : w.queue,
        tenant: tenantKey(q.name),
        tenantWeight: w.tenant,
        ...(cost ? { cost: cost(q.name) } : {}),
      };
    });
  const backlogs = new Map<string, number>();
  for (const q of queues) if (q.weight > 0) backlogs.set(q.tenant, (backlogs.get(q.tenant) ?? 0) + q.depth);
  return queues.map((q) => ({ ...q, backlog: backlogs.get(q.tenant) ?? q.depth }));
}

/** Each queue's work per message in the fair-by unit; undefined when shares are by messages. */
function costOf(sizes: Sizes): ((queue: string) => number) | undefined {
  if (sizes.fairBy?.unit === 'bytes') return bytesOf(sizes);
  if (sizes.fairBy?.unit === 'declared') return declaredOf(sizes.costs ?? {}, sizes.fairBy.missing);
  return undefined;
}

/**
 * A queue's declared cost: its tenant's as learned, else the mean of the costs learned on the
 * target (a new tenant is taken for an average one until its first moves), else `missing`.
 */
function declaredOf(costs: Readonly<Record<string, number>>, missing: number): (queue: string) => number {
  const known = Object.values(costs);
  const fallback = known.length > 0 ? known.reduce((a, b) => a + b, 0) / known.length : missing;
  return (queue) => {
    const tenant = tenantKey(queue);
    return Object.hasOwn(costs, tenant) ? costs[tenant]! : fallback;
  };
}

/**
 * A queue's message size: as listed, else the target's staged average, else the mean of the sizes
 * listed, else 1 (every queue alike: shares by messages).
 */
function bytesOf(sizes: Sizes): (queue: string) => number {
  const listed = Object.values(sizes.queueBytes ?? {}).filter((b) => b > 0);
  const fallback =
    sizes.stagedMessageBytes > 0
      ? sizes.stagedMessageBytes
      : listed.length > 0
        ? listed.reduce((a, b) => a + b, 0) / listed.length
        : 1;
  return (queue) => {
    const bytes = sizes.queueBytes && Object.hasOwn(sizes.queueBytes, queue) ? sizes.queueBytes[queue]! : 0;
    return bytes > 0 ? bytes : fallback;
  };
}

export type { QueueWeight };

/**
 * What the staging queues hold that the planner may move: a queue weighing 0 at a level it is
 * planned by (paused) waits for its tenant to be resumed, not for a follow-up.
 */
export function stagedDepth(
  staging: readonly { name: string; depth: number }[],
  weight: (queue: string) => QueueWeight,
  planner: PlannerMode,
): number {
  const weighs = (w: QueueWeight) => (planner === 'tenant' ? w.tenant > 0 && w.workflow > 0 : w.queue > 0);
  return staging.reduce((n, q) => n + (weighs(weight(q.name)) ? q.depth : 0), 0);
}
