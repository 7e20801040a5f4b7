import { type Table, tableMarkdown } from './report';

/**
 * `npm run bench -- <name> --write`: each bench owns one section of BENCHMARKS.md, between two
 * markers, and a run replaces it (the history is git's). Text outside the markers is the readers'
 * notes and stays as it is.
 */
export const sectionMarkers = (bench: string) => ({
  start: `<!-- bench:${bench}:start -->`,
  end: `<!-- bench:${bench}:end -->`,
});

export interface SectionRun {
  bench: string;
  summary: string;
  /** The command that reproduces the run, e.g. `npm run bench -- router --rounds 5`. */
  command: string;
  /** machineLine() of the run. */
  machine: string;
  tables: readonly Table[];
}

/**
 * Where a run's section goes and the command that reproduces it: a run on the tests' RabbitMQ 4.0
 * node (TEST_ON_RABBITMQ4=1, docs/operating.md "Benchmarks") keeps a section of its own, beside the 3.10 one.
 */
export function brokerRun(bench: string, command: string, onRabbitmq4: boolean): { bench: string; command: string } {
  return onRabbitmq4 ? { bench: `${bench}-rabbitmq4`, command: `TEST_ON_RABBITMQ4=1 ${command}` } : { bench, command };
}

/** A run as its section: the goals table when the bench has one (the verdicts), else every table it printed. */
export function sectionMarkdown(run: SectionRun): string {
  const goals = run.tables.filter((table) => table.goals !== undefined);
  const shown = goals.length > 0 ? goals : run.tables;
  const { start, end } = sectionMarkers(run.bench);
  return [
    start,
    `## ${run.bench}: ${run.summary}`,
    '',
    `- **Reproduce:** \`${run.command}\``,
    `- **Ran on:** ${run.machine.replace(/^machine: /, '')}`,
    '',
    shown.map((table) => tableMarkdown(table.title, table.rows).replace(/^### /, '#### ')).join('\n\n'),
    end,
  ].join('\n');
}

/**
 * `document` with the bench's section replaced by `section` (which carries its own markers), or
 * with `section` appended when the document has none yet. A marker without its pair is refused:
 * replacing up to the wrong marker would delete other benches' sections.
 */
export function rewriteSection(document: string, bench: string, section: string): string {
  const { start, end } = sectionMarkers(bench);
  const from = document.indexOf(start);
  const to = document.indexOf(end);
  const twice = document.indexOf(start, from + 1) >= 0 || document.indexOf(end, to + 1) >= 0;
  if (from < 0 && to < 0) return `${document.trimEnd()}\n\n${section}\n`;
  if (from < 0 || to < from || twice)
    throw new Error(`BENCHMARKS.md: the ${bench} section's markers are not one ${start} … ${end} pair`);
  return document.slice(0, from) + section + document.slice(to + end.length);
}
