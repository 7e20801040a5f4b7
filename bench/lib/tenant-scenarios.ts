import { type PlanInput, type PlannerMode, planShares } from '../../lib/distributor/planning/planner';
import { chargeMoves, stagedQueues, tenantKey, type WorkCarry } from '../../lib/distributor/planning/tenant-backlog';
import type { FairBy } from '../../lib/distributor/planning/weights';
import { jainIndex } from './fairness-metrics';

/**
 * A planner as a run compares them: the mode, and (tenant mode) what shares are equal in: messages,
 * work known before the plan (bytes, as listed), or work declared by each message and learned from
 * the moves (the planner starts knowing no cost; planning/tenant-backlog.ts).
 */
export interface PlannerChoice {
  mode: PlannerMode;
  fairBy?: 'messages' | 'work' | 'declared';
}

/** What each tenant got in each window of passes, and Jain's index of it per window. */
export interface WindowFigures {
  /** Per window, per tenant (in tenant order): messages moved (split) or worker time (cost skew). */
  windows: number[][];
  /** Jain's index per window. */
  jain: number[];
}

interface StagedQueue {
  name: string;
  depth: number;
  /** Work a message of it takes (bytes, or a declared cost). */
  cost: number;
}

const DECLARED: FairBy = { unit: 'declared', header: 'x-cost', missing: 1 };

/** Plans one pass as the distributor would (every share moved), carrying its rotation, deficits and learned costs to the next. */
function planner(choice: PlannerChoice) {
  let carry: Pick<PlanInput, 'rotationCursor' | 'innerCursors' | 'deficits'> & WorkCarry = {};
  const declared = choice.fairBy === 'declared';
  const fairBy = choice.fairBy === 'declared' ? 'work' : choice.fairBy;
  return (capacity: number, queues: readonly StagedQueue[]): Map<string, number> => {
    const planned = declared
      ? stagedQueues(queues, { planner: 'tenant', fairBy: DECLARED, stagedMessageBytes: 0, ...carry }, () => ({
          queue: 1,
          tenant: 1,
          workflow: 1,
        }))
      : queues.map((q) => ({ ...q, weight: 1, tenant: tenantKey(q.name) }));
    const plan = planShares({
      capacity,
      queues: planned,
      mode: choice.mode,
      ...(fairBy ? { fairBy } : {}),
      ...carry,
    });
    const work = declared
      ? chargeMoves(
          { ...(plan.deficits ? { deficits: plan.deficits } : {}), ...(carry.costs ? { costs: carry.costs } : {}) },
          plan.shares.map(({ name, share }, i) => ({
            tenant: tenantKey(name),
            depth: queues[i]!.depth,
            cost: planned[i]!.cost ?? 1,
            planned: share,
            moved: share,
            work: share * queues[i]!.cost,
          })),
          { tenants: new Set(queues.map((q) => tenantKey(q.name))) },
        )
      : { ...(plan.deficits ? { deficits: plan.deficits } : {}) };
    carry = {
      ...(plan.rotationCursor === undefined ? {} : { rotationCursor: plan.rotationCursor }),
      ...(plan.innerCursors ? { innerCursors: plan.innerCursors } : {}),
      ...work,
    };
    return new Map(plan.shares.map((s) => [s.name, s.share]));
  };
}

const BACKLOG = 1_000_000_000;

/**
 * The split scenario: tenant A stages over `workflows` workflows, B over one, both always
 * backlogged; the target takes `capacity` messages a pass (its workers empty it in between).
 * Messages moved per tenant per window of `window` passes.
 */
export function splitScenario(
  choice: PlannerChoice,
  { capacity, workflows, passes, window }: { capacity: number; workflows: number; passes: number; window: number },
): WindowFigures {
  const queues: StagedQueue[] = [
    ...Array.from({ length: workflows }, (_, i) => ({ name: `t»/A/wf${i}`, depth: BACKLOG, cost: 1 })),
    { name: 't»/B/wf0', depth: BACKLOG, cost: 1 },
  ];
  const plan = planner(choice);
  return windowed(passes, window, ['t»/A', 't»/B'], (got) => {
    for (const [name, share] of plan(capacity, queues)) got(tenantKey(name), share);
  });
}

/**
 * The cost-skew scenario: A's messages take `skew` times the work of B's (1 unit), both always
 * backlogged. The target holds at most `maxLength` messages; its workers take them in order and
 * have `work` units of time a pass (a message started in one pass finishes in a later one). Each
 * pass refills the target's room. Worker time per tenant per window of `window` passes.
 */
export function costSkewScenario(
  choice: PlannerChoice,
  {
    skew,
    maxLength,
    work,
    passes,
    window,
  }: { skew: number; maxLength: number; work: number; passes: number; window: number },
): WindowFigures {
  const queues: StagedQueue[] = [
    { name: 't»/A/wf0', depth: BACKLOG, cost: skew },
    { name: 't»/B/wf0', depth: BACKLOG, cost: 1 },
  ];
  const cost = new Map(queues.map((q) => [q.name, q.cost]));
  const plan = planner(choice);
  const target: { tenant: string; cost: number }[] = [];
  let credit = 0;
  return windowed(passes, window, ['t»/A', 't»/B'], (got) => {
    for (const [name, share] of plan(maxLength - target.length, queues)) {
      for (let i = 0; i < share; i++) target.push({ tenant: tenantKey(name), cost: cost.get(name)! });
    }
    // The workers' time this pass goes to the messages in the target's order, the first one's first.
    credit += work;
    while (target.length > 0 && credit > 0) {
      const head = target[0]!;
      const spent = Math.min(credit, head.cost);
      got(head.tenant, spent);
      credit -= spent;
      head.cost -= spent;
      if (head.cost === 0) target.shift();
    }
    if (target.length === 0) credit = 0;
  });
}

function windowed(
  passes: number,
  window: number,
  tenants: readonly string[],
  pass: (got: (tenant: string, amount: number) => void) => void,
): WindowFigures {
  const windows: number[][] = [];
  for (let p = 0; p < passes; p++) {
    if (p % window === 0) windows.push(tenants.map(() => 0));
    const current = windows[windows.length - 1]!;
    pass((tenant, amount) => {
      current[tenants.indexOf(tenant)]! += amount;
    });
  }
  return { windows, jain: windows.map((w) => jainIndex(w)) };
}
