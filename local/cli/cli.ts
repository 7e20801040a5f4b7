import { parseArgs } from 'node:util';
import type { Env } from '../../lib/config/env';
import { ConfigError, errorText } from '../../lib/errors';
import { type Command, UsageError } from './command';
import { dlqCommand } from './commands/dlq';
import { invokeCommand } from './commands/invoke';
import { queuesCommand } from './commands/queues';
import { stackCommand } from './commands/stack';
import { tenantsCommand } from './commands/tenants';
import { renderTables } from './output';

export const commands: readonly Command[] = [tenantsCommand, queuesCommand, stackCommand, invokeCommand, dlqCommand];

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
    io.out(overview());
    return name ? 0 : 2;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.err(`fairway: unknown command ${JSON.stringify(name)}\n\n${overview()}`);
    return 2;
  }
  let json = false;
  try {
    const { values, positionals } = parseCommandLine(command, rest);
    json = values.json === true;
    if (values.help) {
      io.out(command.usage);
      return 0;
    }
    const result = await command.run({ positionals, options: values, env });
    io.out(json ? JSON.stringify(result.data, null, 2) : (result.text ?? renderTables(result.tables)));
    return 0;
  } catch (error) {
    const usage = error instanceof UsageError;
    const message = usage
      ? error.message
      : error instanceof ConfigError
        ? new ConfigError(error.problems, CLI_REMEDY).message
        : errorText(error);
    if (json) io.out(JSON.stringify({ error: message }));
    io.err(`fairway ${name}: ${message}${usage ? `\n\n${command.usage}` : ''}`);
    return usage || error instanceof ConfigError ? 2 : 1;
  }
}

/** The command's options and positionals; an unknown or malformed option is a UsageError. */
function parseCommandLine(command: Command, args: readonly string[]) {
  try {
    return parseArgs({
      args: [...args],
      options: { ...command.options, json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message, { cause: error });
  }
}
