import { parseArgs } from 'node:util';
import type { Env } from '../../lib/platform/config';
import { ConfigError, errorText } from '../../lib/platform/errors';
import { type Command, suggestion, UsageError } from './command';
import { dlqCommand } from './commands/dlq';
import { doctorCommand } from './commands/doctor';
import { invokeCommand } from './commands/invoke';
import { queuesCommand } from './commands/queues';
import { setupCommand } from './commands/setup';
import { stackCommand } from './commands/stack';
import { tenantsCommand } from './commands/tenants';
import { renderTables } from './output';

export const commands: readonly Command[] = [
  tenantsCommand,
  queuesCommand,
  stackCommand,
  invokeCommand,
  dlqCommand,
  doctorCommand,
  setupCommand,
];

export interface Io {
  out(text: string): void;
  err(text: string): void;
}

const overview = () =>
  [
    'usage: fairway <command> [options] [--json]',
    '',
    ...commands.map((c) => `  ${c.name.padEnd(8)} ${c.summary}`),
    '',
    'Settings come from the environment, as for the functions (docs/operating.md).',
    '--json prints one JSON document for scripts; `fairway <command> --help` shows a command’s options.',
  ].join('\n');

/** The CLI reads its settings from this shell's environment: there is nothing to redeploy. */
export const CLI_REMEDY =
  'Set these variables in the environment you run fairway from (`npm start` prints a block that points at the local stack) and run it again.';

/** Runs one CLI command; returns the exit code (0 ok, 1 failed, 2 wrong usage or settings). */
export async function runCli(argv: readonly string[], env: Env, io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    (name ? io.out : io.err)(overview());
    return name ? 0 : 2;
  }
  // Known before the arguments are parsed, so that a script gets its JSON error for a bad option too.
  const json = rest.includes('--json');
  /** One line on stderr (and the JSON error on stdout); a usage error also says where help is. */
  const fail = (message: string, code: 1 | 2, command?: string, usage = false) => {
    if (json) io.out(JSON.stringify({ error: message }));
    const help = usage ? ` (see \`fairway ${command ? `${command} ` : ''}--help\`)` : '';
    io.err(`fairway${command ? ` ${command}` : ''}: ${message}${help}`);
    return code;
  };
  const command = commands.find((c) => c.name === name);
  if (!command) {
    const near = suggestion(
      name,
      commands.map((c) => c.name),
    );
    return fail(`unknown command ${JSON.stringify(name)}${near}`, 2, undefined, true);
  }
  try {
    const { values, positionals } = parseCommandLine(command, rest);
    if (values.help) {
      io.out(command.usage);
      return 0;
    }
    const result = await command.run({ positionals, options: values, env });
    io.out(json ? JSON.stringify(result.data, null, 2) : (result.text ?? renderTables(result.tables)));
    return result.exitCode ?? 0;
  } catch (error) {
    if (error instanceof UsageError) return fail(error.message, 2, name, true);
    if (error instanceof ConfigError) return fail(new ConfigError(error.problems, CLI_REMEDY).message, 2, name);
    return fail(errorText(error), 1, name);
  }
}

/**
 * The command's options and positionals; an unknown or malformed option is a UsageError. A negative
 * number (`weight acme -1`, `--top -1`) is an argument, not an option: parseArgs would take it for
 * the short option `-1`, so it is set aside before parsing and put back after.
 */
function parseCommandLine(command: Command, args: readonly string[]) {
  // Each negative number stands in as a token no option or typed argument can be, and is put back.
  const negatives = new Map<string, string>();
  const masked = args.map((arg) => {
    if (!/^-(\d|\.\d)/.test(arg)) return arg;
    const token = `\u0000${negatives.size}`;
    negatives.set(token, arg);
    return token;
  });
  const restore = (value: string) => negatives.get(value) ?? value;
  try {
    const { values, positionals } = parseArgs({
      args: masked,
      options: { ...command.options, json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
    return {
      positionals: positionals.map(restore),
      values: Object.fromEntries(
        Object.entries(values).map(([key, value]) => [key, typeof value === 'string' ? restore(value) : value]),
      ) as typeof values,
    };
  } catch (error) {
    // parseArgs' advice to use `--` quotes the argument with an unclosed quote; the hint says where help is.
    throw new UsageError(
      errorText(error)
        .replace(/^\w+: /, '')
        .replace(/\. To specify a positional.*$/, ''),
      {
        cause: error,
      },
    );
  }
}
