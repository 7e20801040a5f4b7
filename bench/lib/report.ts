import { cpus, totalmem, type } from 'node:os';

/** What every benchmark prints first, so that figures are read against the machine they came from. */
export function machineLine(): string {
  const cpu = cpus();
  return (
    `machine: ${type()} ${process.arch}, ${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ` +
    `${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${new Date().toISOString()}`
  );
}

export type Row = Record<string, string | number>;

/** What a benchmark reports: one table, with notes that say how to read it. */
export interface Table {
  title: string;
  rows: Row[];
  notes?: string[];
  /** Set on a bench's goals table (goalsTable). */
  goals?: Goal[];
}

/** Rows as an aligned text table under a `###` title (also valid Markdown, for BENCHMARKS.md). */
export function tableMarkdown(title: string, rows: Row[]): string {
  if (rows.length === 0) return `### ${title}\n\n(no rows)`;
  const headers = Object.keys(rows[0]!);
  const cells = rows.map((row) => headers.map((h) => format(row[h])));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (values: string[]) => `| ${values.map((v, i) => v.padEnd(widths[i]!)).join(' | ')} |`;
  const rule = line(widths.map((w) => '-'.repeat(w)));
  return [`### ${title}`, '', line(headers), rule, ...cells.map(line)].join('\n');
}

function format(value: string | number | undefined): string {
  if (typeof value !== 'number') return value ?? '';
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) >= 100 ? value.toFixed(0) : value.toPrecision(3);
}

/** Runs `work` and returns its result with the elapsed seconds (for throughput ratios, never assertions). */
export async function timed<T>(work: () => Promise<T>): Promise<{ result: T; seconds: number }> {
  const start = process.hrtime.bigint();
  const result = await work();
  return { result, seconds: Number(process.hrtime.bigint() - start) / 1e9 };
}

/** `--name value` flags with numeric defaults, e.g. `numberFlag('messages', 50_000)`. */
export function numberFlag(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  if (index < 0) return fallback;
  const value = Number(process.argv[index + 1]);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`--${name} takes a positive number, got ${process.argv[index + 1]}`);
  return value;
}

/** Prints a benchmark's table followed by its notes. */
export function printReport(table: Table): void {
  console.log(`\n${tableMarkdown(table.title, table.rows)}`);
  for (const note of table.notes ?? []) console.log(`\n${note}`);
}

/** The median of a non-empty list (repeated runs on a shared machine: the median resists one slow outlier). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of an empty list');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * `a ÷ b` in each round, the two runs side by side: take the median of these, not the ratio of
 * the medians, whose runs may come from rounds of different load on a shared machine.
 */
export function roundRatios(a: readonly number[], b: readonly number[]): number[] {
  return a.map((value, round) => value / b[round]!);
}

/** A goal of the issue, with what this run measured against it. */
export interface Goal {
  goal: string;
  /** The bound, e.g. "≥ 0.9" or "≤ 10 s". */
  target: string;
  /** What this run measured, e.g. "0.97 (8,982 vs 9,260 msg/s)". */
  measured: string;
  met: boolean;
  /** A figure the bench reports beside its goals, with no bound of its own (its verdict reads "reported"). */
  reported?: true;
}

/** The goals a bench measured, as a table that `npm run bench` also gathers into its closing summary. */
export function goalsTable(bench: string, goals: Goal[]): Table {
  return {
    title: `Goals: ${bench}`,
    rows: goals.map(goalRow),
    goals,
  };
}

export function goalRow(goal: Goal): Row {
  return {
    goal: goal.goal,
    target: goal.target,
    'this run': goal.measured,
    verdict: goal.reported ? 'reported' : goal.met ? 'met' : 'NOT MET',
  };
}

/**
 * Runs each of `runs` once per round, the order rotated every round (so drift on a shared
 * machine, and whatever one run leaves behind, falls on each in turn), and returns each run's
 * results in round order.
 */
export async function inRotation<K extends string>(
  runs: Record<K, () => Promise<number>>,
  rounds: number,
  progress: (line: string) => void,
): Promise<Record<K, number[]>> {
  const keys = Object.keys(runs) as K[];
  const results = Object.fromEntries(keys.map((key) => [key, [] as number[]])) as unknown as Record<K, number[]>;
  for (let round = 0; round < rounds; round++) {
    const start = round % keys.length;
    for (const key of [...keys.slice(start), ...keys.slice(0, start)]) {
      const value = await runs[key]();
      results[key].push(value);
      progress(`round ${round + 1}: ${key} ${value.toPrecision(4)}`);
    }
  }
  return results;
}
