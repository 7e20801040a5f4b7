import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { managementApi } from '../local/management-api';
import { projectRoot } from '../local/paths';
import { benchmarks } from './benchmarks';
import { type Benchmark, flagsFromArgv, textFlag } from './lib/benchmark';
import { type Goal, goalRow, machineLine, printReport } from './lib/report';
import { brokerRun, rewriteSection, sectionMarkdown } from './lib/sections';
import { onRabbitmq4, services } from './lib/services';

/**
 * `npm run bench [-- <name…>] [--<flag> N…] [--tiny | --full] [--write]`
 *
 * With no name, runs every benchmark in turn, each in a child process of its own (so one
 * bench's memory and sockets do not skew the next, and peak memory is measured in a clean
 * process). With names, runs those in this process. Flags go to every bench that has them.
 * `--write` replaces each bench's own section of BENCHMARKS.md with this run's (bench/lib/sections.ts).
 */
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help')) return usage();
  const named = args.filter((arg, i) => !arg.startsWith('--') && !args[i - 1]?.match(/^--(?!(tiny|full|write)$)/));
  const unknown = named.filter((name) => !benchmarks.some((b) => b.name === name));
  if (unknown.length > 0)
    throw new Error(`Unknown benchmark ${unknown.join(', ')}; known: ${benchmarks.map((b) => b.name).join(', ')}`);
  const known = new Set([
    'tiny',
    'full',
    'write',
    ...benchmarks.flatMap((b) => [...Object.keys(b.flags), ...Object.keys(b.textFlags ?? {})]),
  ]);
  const typos = args.filter((arg) => arg.startsWith('--') && !known.has(arg.slice(2)));
  if (typos.length > 0) throw new Error(`Unknown flag ${typos.join(', ')}; see npm run bench -- --help`);

  if (named.length === 0) {
    console.log(machineLine());
    console.log(`command: npm run bench${args.length ? ` -- ${args.join(' ')}` : ''}`);
    const goalsFile = join(mkdtempSync(join(tmpdir(), 'fairway-bench-')), 'goals.jsonl');
    let failed = 0;
    for (const bench of benchmarks) failed += await runInChild(bench.name, args, goalsFile);
    printGoals(goalsFile);
    if (failed > 0) throw new Error(`${failed} benchmark(s) failed`);
    return;
  }
  for (const name of named) await runHere(benchmarks.find((b) => b.name === name)!);
}

async function runHere(bench: Benchmark): Promise<void> {
  const flags = flagsFromArgv(bench);
  console.log(`\n## ${bench.name}: ${bench.summary}\n`);
  const broker = await brokerVersion();
  const machine = `${machineLine()}, RabbitMQ ${broker}`;
  console.log(machine);
  const flagText = `${Object.entries(flags)
    .map(([k, v]) => `--${k} ${v}`)
    .join(' ')}${Object.keys(bench.textFlags ?? {})
    .flatMap((name) => {
      const value = textFlag(name);
      return value === undefined ? [] : [` --${name} '${value.replaceAll("'", "'\\''")}'`];
    })
    .join('')}`;
  console.log(`flags: ${flagText}`);
  const started = Date.now();
  const tables = await bench.run(flags, (line) => console.error(`[${bench.name}] ${line}`));
  for (const table of tables) printReport(table);
  if (process.argv.includes('--write')) {
    // run-ts.mjs sets argv[1] to this entry point, in the tree the run came from.
    const file = join(projectRoot(dirname(process.argv[1]!)), 'BENCHMARKS.md');
    const run = brokerRun(bench.name, `npm run bench -- ${bench.name} ${flagText}`.trim(), onRabbitmq4);
    const section = sectionMarkdown({ ...run, summary: bench.summary, machine, tables });
    writeFileSync(file, rewriteSection(readFileSync(file, 'utf8'), run.bench, section));
    console.log(`\n(${run.bench}: its section of BENCHMARKS.md rewritten)`);
  }
  const goals = tables.flatMap((table) => table.goals ?? []);
  if (process.env.FAIRWAY_BENCH_GOALS && goals.length > 0)
    appendFileSync(process.env.FAIRWAY_BENCH_GOALS, goals.map((goal) => `${JSON.stringify(goal)}\n`).join(''));
  console.log(`\n(${bench.name} took ${((Date.now() - started) / 1000).toFixed(0)} s)`);
}

/** The version of the RabbitMQ node the benches run on, as its management API says. */
async function brokerVersion(): Promise<string> {
  const overview = await managementApi(services.managementUrl)<{ rabbitmq_version: string }>('GET', '/api/overview');
  return overview.rabbitmq_version;
}

/** Every goal of every bench in one table, last: what `npm run bench` answers to the issue. */
function printGoals(file: string): void {
  const goals: Goal[] = existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : [];
  printReport({ title: 'All goals of this run', rows: goals.map(goalRow) });
  const missed = goals.filter((goal) => !goal.met).length;
  console.log(`\n${goals.length - missed} of ${goals.length} goals met.`);
}

function runInChild(name: string, args: string[], goalsFile: string): Promise<number> {
  // run-ts.mjs sets argv[1] to this entry point: the child runs the same file from the same tree.
  const entry = process.argv[1]!;
  const child = spawn(
    process.execPath,
    ['--expose-gc', join(projectRoot(dirname(entry)), 'scripts/run-ts.mjs'), entry, name, ...args],
    { stdio: 'inherit', env: { ...process.env, FAIRWAY_BENCH_GOALS: goalsFile } },
  );
  return new Promise((resolve) => child.on('exit', (code) => resolve(code === 0 ? 0 : 1)));
}

function usage(): void {
  console.log('npm run bench [-- <name…>] [--<flag> N…] [--tiny | --full] [--write]\n');
  console.log("--write  replaces each bench's section of BENCHMARKS.md with this run's");
  console.log(
    "TEST_ON_RABBITMQ4=1 runs on the tests' RabbitMQ 4.0 node; --write then keeps a <name>-rabbitmq4 section\n",
  );
  for (const bench of benchmarks) {
    console.log(`${bench.name}: ${bench.summary}`);
    for (const [flag, spec] of Object.entries(bench.flags))
      console.log(
        `  --${flag} N  ${spec.help} (quick ${spec.quick}, tiny ${spec.tiny}${spec.full === undefined ? '' : `, full ${spec.full}`})`,
      );
    for (const [flag, help] of Object.entries(bench.textFlags ?? {})) console.log(`  --${flag} TEXT  ${help}`);
  }
}

main().catch((error: Error) => {
  console.error(error.stack ?? error.message);
  process.exitCode = 1;
});
