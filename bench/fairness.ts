import { type PlannerMode, planShares } from '../lib/distributor/planning/planner';
import { type Benchmark, ratio } from './lib/benchmark';
import type { Row } from './lib/report';
import {
  type CapacityClass,
  generateScenario,
  type Outcome,
  type PlanPass,
  seededRandom,
  simulate,
} from './lib/scenarios';
import { tenantTables } from './lib/tenant-tables';

type Flags = 'scenarios' | 'passes' | 'seed';

const planner =
  (mode: PlannerMode): PlanPass =>
  (capacity, queues, rotationCursor) =>
    planShares({ capacity, queues: queues.map((q) => ({ ...q, weight: 1 })), mode, rotationCursor });

/**
 * SPEC §3 fairness: the same randomized targets (skewed depths and arrivals, capacity below and
 * above the number of staging queues) planned pass after pass by Fairway's water-filling planner
 * and by the reference implementation's ceil(capacity ÷ N), side by side.
 */
export const fairnessBench: Benchmark<Flags> = {
  name: 'fairness',
  summary:
    "planner fairness and utilization, Fairway's water-filling against the reference ceil(capacity ÷ N); shares per tenant and by work against per-queue shares",
  flags: {
    scenarios: { quick: 1_000, tiny: 20, help: 'randomized targets, half with capacity below the number of queues' },
    passes: { quick: 100, tiny: 10, help: 'passes simulated per scenario' },
    seed: { quick: 1, tiny: 1, help: 'seed of the scenario generator (same seed, same scenarios)' },
  },
  async run(flags, progress) {
    const random = seededRandom(flags.seed);
    // One staging queue per tenant here: the tenant planner's shares are the per-queue ones.
    const outcomes: Record<Compared, Record<CapacityClass, Outcome[]>> = {
      tenant: { below: [], above: [] },
      reference: { below: [], above: [] },
    };
    for (let i = 0; i < flags.scenarios; i++) {
      const scenario = generateScenario(random, i % 2 === 0 ? 'below' : 'above', flags.passes);
      for (const mode of ['tenant', 'reference'] as const)
        outcomes[mode][scenario.capacityClass].push(simulate(scenario, planner(mode)));
    }
    progress(`${flags.scenarios} scenarios × ${flags.passes} passes simulated with both planners`);

    const rows: Row[] = [];
    for (const capacityClass of ['below', 'above'] as const) {
      for (const mode of ['tenant', 'reference'] as const) {
        rows.push(
          summarise(
            mode === 'tenant' ? 'Fairway' : 'reference',
            capacityClass,
            outcomes[mode][capacityClass],
            flags.passes,
          ),
        );
      }
    }
    const all = (mode: Compared) =>
      summarise('', 'all', [...outcomes[mode].below, ...outcomes[mode].above], flags.passes);
    const [fair, reference] = [all('tenant'), all('reference')];
    rows.push({
      planner: 'Fairway ÷ reference',
      capacity: 'all',
      scenarios: flags.scenarios,
      'capacity used (mean)': ratio(
        fair['capacity used (mean)'] as number,
        reference['capacity used (mean)'] as number,
      ),
      'capacity used (worst)': ratio(
        fair['capacity used (worst)'] as number,
        reference['capacity used (worst)'] as number,
      ),
      'passes overshooting': '',
      'overshoot (% of capacity)': '',
      'Jain (mean)': ratio(fair['Jain (mean)'] as number, reference['Jain (mean)'] as number),
      'Jain (worst)': ratio(fair['Jain (worst)'] as number, reference['Jain (worst)'] as number),
      'queues starved': '',
      'longest wait (passes)': '',
      'waits beyond unavoidable': '',
    });
    return [
      {
        title: `Fairness and utilization: ${flags.scenarios} randomized targets × ${flags.passes} passes (seed ${flags.seed})`,
        rows,
        notes: [
          'Each scenario: 2–60 staging queues, log-normal depths and arrival rates (total arrivals 0.5–1.5 × capacity ' +
            'per pass), one target emptied by its workers between passes; capacity "below" = 1…n−1, "above" = n…50n. ' +
            'Both planners see the same scenarios and the same arrivals; every planned message is moved.',
          'capacity used = moved ÷ min(capacity, Σ depth) per pass, capped at 1 (what moves beyond capacity is overshoot; ' +
            'on a target with x-max-length it is dropped or rejected), averaged over passes; worst = lowest scenario mean. ' +
            "Jain's index (1 = equal) of the messages moved in total from the queues still backlogged after every pass, " +
            'over scenarios with at least 2 such queues. Starved: non-empty before every pass and never served. ' +
            'Longest wait: most consecutive passes a non-empty queue got nothing; waits beyond unavoidable: scenarios ' +
            'where that exceeds ⌈queues ÷ capacity⌉ − 1, the wait an even rotation needs when there are fewer ' +
            'messages than queues (the reference avoids waiting by overshooting).',
        ],
      },
      ...tenantTables(flags.passes),
    ];
  },
};

type Compared = Extract<PlannerMode, 'tenant' | 'reference'>;

function summarise(planner: string, capacityClass: CapacityClass | 'all', outcomes: Outcome[], passes: number): Row {
  const used = outcomes.map((o) => o.capacityUsed);
  const jain = outcomes.flatMap((o) => (o.jain === undefined ? [] : [o.jain]));
  const overshootPasses = outcomes.reduce((n, o) => n + o.overshootPasses, 0);
  return {
    planner,
    capacity: capacityClass,
    scenarios: outcomes.length,
    'capacity used (mean)': mean(used),
    'capacity used (worst)': Math.min(...used),
    'passes overshooting': percent(overshootPasses / (outcomes.length * passes)),
    'overshoot (% of capacity)': percent(meanOf(outcomes, (o) => o.overshootMessages / (o.capacity * passes))),
    'Jain (mean)': jain.length ? mean(jain) : '–',
    'Jain (worst)': jain.length ? Math.min(...jain) : '–',
    'queues starved': outcomes.reduce((n, o) => n + o.starved, 0),
    'longest wait (passes)': Math.max(...outcomes.map((o) => o.longestWait)),
    'waits beyond unavoidable': outcomes.filter((o) => o.longestWait > o.unavoidableWait).length,
  };
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const meanOf = <T>(items: T[], value: (item: T) => number) => mean(items.map(value));
const percent = (fraction: number) => `${(100 * fraction).toFixed(fraction > 0 && fraction < 0.001 ? 3 : 1)} %`;
