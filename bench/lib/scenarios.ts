import { capacityUsed, jainIndex, overshoot } from './fairness-metrics';

/** Seeded, so the same seed gives the same scenarios and runs compare. */
export { seededRandom } from '../../lib/cleanup/engine/random';

export type CapacityClass = 'below' | 'above';

export interface Scenario {
  /** Capacity of the target each pass (workers empty it between passes). */
  capacity: number;
  capacityClass: CapacityClass;
  queues: { name: string; depth: number }[];
  /** arrivals[pass][queue]: messages the router adds to each staging queue after each pass. */
  arrivals: number[][];
}

const between = (random: () => number, low: number, high: number) => low + Math.floor(random() * (high - low + 1));

/** Log-normal sizes: most queues small, a few very deep, as tenants are. */
function skewed(random: () => number, median: number, spread: number): number {
  const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  return median * Math.exp(spread * normal);
}

/**
 * A random target: 2–60 staging queues with skewed depths and skewed arrival rates whose total is
 * 0.5–1.5 × capacity (so some queues drain and some stay backlogged), and a capacity either
 * below the number of queues (1 … n−1) or above it (n … 50n).
 */
export function generateScenario(random: () => number, capacityClass: CapacityClass, passes: number): Scenario {
  const count = between(random, 2, 60);
  const capacity = capacityClass === 'below' ? between(random, 1, count - 1) : between(random, count, 50 * count);
  const queues = Array.from({ length: count }, (_, i) => ({
    name: `target»/tenant${String(i).padStart(2, '0')}`,
    depth: Math.round(skewed(random, 2 * capacity, 1.5)),
  }));
  const rates = queues.map(() => skewed(random, 1, 1.5));
  const scale = (capacity * (0.5 + random())) / rates.reduce((a, b) => a + b, 0);
  // Stochastic rounding keeps small rates from all rounding to zero.
  const arrivals = Array.from({ length: passes }, () => rates.map((rate) => Math.floor(rate * scale + random())));
  return { capacity, capacityClass, queues, arrivals };
}

/** One pass of a planner: how many messages to move from each queue, and the carry-over it keeps. */
export type PlanPass = (
  capacity: number,
  queues: { name: string; depth: number }[],
  rotationCursor: string | undefined,
) => { shares: { name: string; share: number }[]; rotationCursor?: string };

export interface Outcome {
  /** The scenario's capacity per pass. */
  capacity: number;
  /** Mean over passes that could move anything of moved ÷ min(capacity, Σ depth), capped at 1. */
  capacityUsed: number;
  /** Passes that moved more than the capacity, and the messages moved beyond it in all passes. */
  overshootPasses: number;
  overshootMessages: number;
  /** Jain's index of what the queues backlogged after every pass got in total; undefined with fewer than 2. */
  jain?: number;
  backloggedQueues: number;
  /** Queues that held messages before every pass and got nothing in any. */
  starved: number;
  /** Longest run of consecutive passes a queue held messages and got none. */
  longestWait: number;
  /**
   * ⌈queues ÷ capacity⌉ − 1: with fewer messages than queues, the wait an even rotation cannot
   * avoid without overshooting. 0 when capacity covers every queue.
   */
  unavoidableWait: number;
}

/** Runs `passes` passes of `plan` over the scenario (each planned share is moved in full). */
export function simulate(scenario: Scenario, plan: PlanPass): Outcome {
  const depth = scenario.queues.map((q) => q.depth);
  const names = scenario.queues.map((q) => q.name);
  const total = names.map(() => 0);
  const alwaysBacklogged = names.map(() => true);
  const alwaysWaiting = names.map(() => true);
  const waiting = names.map(() => 0);
  let longestWait = 0;
  const used: number[] = [];
  let overshootPasses = 0;
  let overshootMessages = 0;
  let cursor: string | undefined;

  for (const arrivals of scenario.arrivals) {
    const demand = depth.reduce((a, b) => a + b, 0);
    const result = plan(
      scenario.capacity,
      names.map((name, i) => ({ name, depth: depth[i]! })),
      cursor,
    );
    cursor = result.rotationCursor;
    const share = new Map(result.shares.map((s) => [s.name, s.share]));
    let moved = 0;
    names.forEach((name, i) => {
      const got = Math.min(share.get(name) ?? 0, depth[i]!);
      if (depth[i]! > 0 && got === 0) longestWait = Math.max(longestWait, ++waiting[i]!);
      else waiting[i] = 0;
      if (depth[i] === 0 || got > 0) alwaysWaiting[i] = false;
      depth[i]! -= got;
      total[i]! += got;
      moved += got;
      if (depth[i] === 0) alwaysBacklogged[i] = false;
      depth[i]! += arrivals[i]!;
    });
    const use = capacityUsed(moved, scenario.capacity, demand);
    if (use !== undefined) used.push(use);
    const over = overshoot(moved, scenario.capacity);
    if (over > 0) overshootPasses++;
    overshootMessages += over;
  }

  const backlogged = total.filter((_, i) => alwaysBacklogged[i]);
  return {
    capacity: scenario.capacity,
    capacityUsed: used.length === 0 ? 1 : used.reduce((a, b) => a + b, 0) / used.length,
    overshootPasses,
    overshootMessages,
    jain: backlogged.length >= 2 ? jainIndex(backlogged) : undefined,
    backloggedQueues: backlogged.length,
    starved: alwaysWaiting.filter(Boolean).length,
    longestWait,
    unavoidableWait: Math.ceil(names.length / Math.max(1, scenario.capacity)) - 1,
  };
}
