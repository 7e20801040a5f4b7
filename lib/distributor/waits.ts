import { parseStagingQueueName, takeStagedAt } from '../staging/staging-names';

/** The wait in staging of the messages one move (or one target's moves) took, in ms. */
export interface WaitFigures {
  /** Messages whose wait was measured: those that carried a staged-at stamp. */
  measured: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/**
 * How long a message waited in staging when it is taken at `at` (epoch ms): undefined without a
 * stamp (routed before the router stamped). Never negative: the router's and the distributor's
 * clocks may differ by a little.
 */
export function waitOf(headers: Record<string, unknown> | undefined, at: number): number | undefined {
  const { stagedAt } = takeStagedAt(headers);
  return stagedAt === undefined ? undefined : Math.max(0, at - stagedAt);
}

/** Nearest-rank percentiles and the maximum of the measured waits; undefined when none was measured. Pure. */
export function waitFigures(waitsMs: readonly number[]): WaitFigures | undefined {
  if (waitsMs.length === 0) return undefined;
  const sorted = [...waitsMs].sort((a, b) => a - b);
  const rank = (p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
  return { measured: sorted.length, p50Ms: rank(50), p99Ms: rank(99), maxMs: sorted[sorted.length - 1]! };
}

/** How many staging queues each pass names per target, the longest waits first (the log's contributors). */
export const LONGEST_WAITS_PER_TARGET = 10;

/**
 * The staging queues with the longest waits, longest first, at most `limit`. Enough for a ranking by
 * maximum: a queue left out of a target's list waited less than `limit` others of it in that pass.
 */
export function longestWaits<Q extends { name: string; wait?: WaitFigures }>(
  queues: readonly Q[],
  limit = LONGEST_WAITS_PER_TARGET,
): (Q & { wait: WaitFigures })[] {
  return queues
    .filter((q): q is Q & { wait: WaitFigures } => q.wait !== undefined)
    .sort((a, b) => b.wait.maxMs - a.wait.maxMs || a.name.localeCompare(b.name))
    .slice(0, limit);
}

/** One line of the distributor's log per staging queue among its target's longest waits: the Contributor Insights rule's input. */
export interface WaitLine {
  target: string;
  stagingQueue: string;
  tenant?: string;
  workflow?: string;
  /** The queue's longest wait this pass: what the rule ranks by. */
  waitMs: number;
  waitP50Ms: number;
  measured: number;
}

/** A target whose staging queues held messages longer than the bound this pass. */
export interface OverBound {
  target: string;
  queues: number;
  longest: { stagingQueue: string; waitMs: number }[];
}

interface Waited {
  target: string;
  queues: readonly { name: string; wait?: WaitFigures }[];
}

/**
 * What a pass's waits come to in the log: per target its longest waits, and the staging queues
 * whose longest wait passed `boundMs`. Pure.
 */
export function waitReport(targets: readonly Waited[], boundMs: number): { lines: WaitLine[]; overBound: OverBound[] } {
  const lines = targets.flatMap(({ target, queues }) =>
    longestWaits(queues).map((q): WaitLine => {
      const { tenant, workflow } = parseStagingQueueName(q.name) ?? {};
      return {
        target,
        stagingQueue: q.name,
        ...(tenant === undefined ? {} : { tenant }),
        ...(workflow === undefined ? {} : { workflow }),
        waitMs: q.wait.maxMs,
        waitP50Ms: q.wait.p50Ms,
        measured: q.wait.measured,
      };
    }),
  );
  const overBound = targets.flatMap(({ target, queues }): OverBound[] => {
    const over = queues.filter((q) => (q.wait?.maxMs ?? 0) > boundMs);
    if (over.length === 0) return [];
    const longest = longestWaits(over).map((q) => ({ stagingQueue: q.name, waitMs: q.wait.maxMs }));
    return [{ target, queues: over.length, longest }];
  });
  return { lines, overBound };
}

/** How many tenants a target's pass names as the noisiest, by backlog and by wait. */
export const NOISY_TENANTS_PER_TARGET = 5;

/** The tenants of one target that hold the most and waited the longest this pass (a bounded list, not a metric each). */
export interface NoisyTenants {
  /** By messages staged over all their workflows, the most first. */
  byBacklog: { tenant: string; staged: number }[];
  /** By the longest wait of a message moved this pass, the longest first (tenants with a measured wait only). */
  byWait: { tenant: string; waitMs: number }[];
}

/**
 * Who is noisy on a target: its tenants ranked by what they hold in staging and by how long their
 * moved messages waited, at most NOISY_TENANTS_PER_TARGET each. A tenant-less queue `target»/workflow`
 * reads as tenant `workflow`, as the planner reads it. Undefined when nothing is staged. Pure.
 */
export function noisyTenants(
  staging: readonly { name: string; depth: number }[],
  moved: readonly { name: string; wait?: WaitFigures }[],
): NoisyTenants | undefined {
  const backlog = new Map<string, number>();
  for (const q of staging)
    if (q.depth > 0) backlog.set(tenantOf(q.name), (backlog.get(tenantOf(q.name)) ?? 0) + q.depth);
  const waits = new Map<string, number>();
  for (const q of moved)
    if (q.wait) waits.set(tenantOf(q.name), Math.max(waits.get(tenantOf(q.name)) ?? 0, q.wait.maxMs));
  if (backlog.size === 0 && waits.size === 0) return undefined;
  return {
    byBacklog: top(backlog).map(([tenant, staged]) => ({ tenant, staged })),
    byWait: top(waits).map(([tenant, waitMs]) => ({ tenant, waitMs })),
  };
}

const tenantOf = (queue: string) => parseStagingQueueName(queue)?.tenant ?? queue;

const top = (figures: ReadonlyMap<string, number>) =>
  [...figures].sort(([a, x], [b, y]) => y - x || a.localeCompare(b)).slice(0, NOISY_TENANTS_PER_TARGET);
