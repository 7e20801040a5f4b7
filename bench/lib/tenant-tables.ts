import type { Table } from './report';
import { costSkewScenario, type PlannerChoice, splitScenario, type WindowFigures } from './tenant-scenarios';

const WINDOW = 10;

/**
 * Issue "fair to tenants": the split scenario (A over 10 workflows, B over 1) and the cost-skew
 * scenario (A's messages 10 × B's work), each planned per tenant and per queue in the same run.
 */
export function tenantTables(passes: number): Table[] {
  const split = (label: string, choice: PlannerChoice, capacity: number) =>
    row(label, capacity, splitScenario(choice, { capacity, workflows: 10, passes, window: WINDOW }));
  const skew = (label: string, choice: PlannerChoice, maxLength: number, work: number) =>
    row(
      label,
      `${maxLength} / ${work}`,
      costSkewScenario(choice, { skew: 10, maxLength, work, passes, window: WINDOW }),
    );
  return [
    {
      title: `Split: tenant A over 10 workflows, B over 1, both backlogged (${passes} passes, windows of ${WINDOW})`,
      rows: [110, 7, 1000].flatMap((capacity) => [
        split('per tenant (tenant)', { mode: 'tenant' }, capacity),
        split('per queue (queue)', { mode: 'queue' }, capacity),
      ]),
      notes: [
        'capacity = messages the target takes each pass (its workers empty it between passes). A:B = messages ' +
          'moved per tenant over the run; Jain over the two tenants per window, the first window left out. ' +
          'Goal: per tenant, Jain ≥ 0.99 in every window after the first.',
      ],
    },
    {
      title: `Cost skew: A's messages take 10 × the work of B's, both backlogged (${passes} passes, windows of ${WINDOW})`,
      rows: [
        [5, 8],
        [20, 30],
        [200, 300],
      ].flatMap(([maxLength, work]) => [
        skew('per tenant, by bytes', { mode: 'tenant', fairBy: 'work' }, maxLength!, work!),
        skew('per tenant, by declared cost (learned)', { mode: 'tenant', fairBy: 'declared' }, maxLength!, work!),
        skew('per tenant, by messages', { mode: 'tenant', fairBy: 'messages' }, maxLength!, work!),
        skew('per queue', { mode: 'queue' }, maxLength!, work!),
      ]),
      notes: [
        "capacity = the target's max length (messages) / the workers' time a pass (B's message takes 1, A's 10); " +
          'the target is refilled each pass, its workers take messages in order. A:B = worker time per tenant over ' +
          'the run; Jain of worker time per window, the first left out. Goal with bytes or a declared cost: Jain ≥ 0.95. ' +
          'The declared cost starts unknown (each message counts 1) and is learned from the moves.',
      ],
    },
  ];
}

function row(planner: string, capacity: number | string, figures: WindowFigures) {
  const later = figures.jain.slice(1);
  const totals = figures.windows.reduce((sum, w) => sum.map((x, i) => x + w[i]!), [0, 0]);
  return {
    planner,
    capacity,
    'A:B': `${(totals[0]! / Math.max(1, totals[1]!)).toFixed(2)} : 1`,
    'Jain (worst window)': later.length > 0 ? Math.min(...later) : '–',
    'Jain (mean)': later.length > 0 ? later.reduce((a, b) => a + b, 0) / later.length : '–',
  };
}
