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
}

/** Prints rows as an aligned text table (also valid Markdown, for BENCHMARKS.md). */
function printTable(title: string, rows: Row[]): void {
  console.log(`\n### ${title}\n`);
  if (rows.length === 0) {
    console.log('(no rows)');
    return;
  }
  const headers = Object.keys(rows[0]!);
  const cells = rows.map((row) => headers.map((h) => format(row[h])));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (values: string[]) => `| ${values.map((v, i) => v.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(headers));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of cells) console.log(line(row));
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
  printTable(table.title, table.rows);
  for (const note of table.notes ?? []) console.log(`\n${note}`);
}

/** The median of a non-empty list (repeated runs on a shared machine: the median resists one slow outlier). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of an empty list');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
