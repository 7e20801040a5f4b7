import { numberFlag, type Table } from './report';

export interface FlagSpec {
  /** The quick default: every benchmark runs in under 3 minutes on 2 cores with these. */
  quick: number;
  /** Sizes small enough for the smoke test and `--tiny`: proves the bench runs end to end, measures nothing. */
  tiny: number;
  /** The full sizes, for `--full` (the quick default when absent). */
  full?: number;
  help: string;
}

/** One benchmark: its sizes come from flags; it measures Fairway and a baseline in the same run. */
export interface Benchmark<F extends string = string> {
  name: string;
  summary: string;
  flags: Record<F, FlagSpec>;
  /** Flags that take text, `--<name> value` (name → help); the bench reads them with `textFlag`. */
  textFlags?: Record<string, string>;
  /** Progress goes to `progress` (stderr); the figures come back as tables. */
  run(flags: Record<F, number>, progress: (line: string) => void): Promise<Table[]>;
}

/** The flag values for `bench`: `--<flag> N` from the command line, else `tiny`, `full` or `quick` defaults. */
export function flagsFromArgv<F extends string>(
  bench: Benchmark<F>,
  tiny = process.argv.includes('--tiny'),
  full = process.argv.includes('--full'),
): Record<F, number> {
  const entries = Object.entries<FlagSpec>(bench.flags).map(([name, spec]) => [
    name,
    numberFlag(name, tiny ? spec.tiny : full ? (spec.full ?? spec.quick) : spec.quick),
  ]);
  return Object.fromEntries(entries) as Record<F, number>;
}

/** The sizes each bench uses in the smoke test. */
export function tinyFlags<F extends string>(bench: Benchmark<F>): Record<F, number> {
  return Object.fromEntries(Object.entries<FlagSpec>(bench.flags).map(([name, spec]) => [name, spec.tiny])) as Record<
    F,
    number
  >;
}

/** `a / b` for "Fairway ÷ baseline" columns; a dash when the baseline is zero. */
export function ratio(a: number, b: number): number | string {
  return b === 0 ? '–' : a / b;
}

/** `--name value` of a text flag (Benchmark.textFlags), or undefined when not given. */
export function textFlag(name: string, argv: readonly string[] = process.argv): string | undefined {
  const index = argv.indexOf(`--${name}`);
  if (index < 0) return undefined;
  const value = argv[index + 1];
  if (value === undefined || value.startsWith('--')) throw new Error(`--${name} takes a value`);
  return value;
}
