import type { ParseArgsConfig } from 'node:util';
import type { Env } from '../../lib/platform/config';
import { closest, editDistance } from '../../lib/wiring/variables';
import type { Table } from './output';

/** What a command returns: `data` is printed as JSON with `--json`; `tables` (or `text`) for people otherwise. */
export interface CommandResult {
  data: unknown;
  tables: Table[];
  text?: string;
  /** 1 when the command ran and found something wrong (`doctor`); 0 when left out. */
  exitCode?: 0 | 1;
}

export interface CommandInput {
  positionals: string[];
  options: Record<string, string | boolean | string[] | undefined>;
  env: Env;
}

export interface Command {
  name: string;
  /** One line for `fairway --help`. */
  summary: string;
  /** Arguments and options, for `fairway <command> --help`. */
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  run(input: CommandInput): Promise<CommandResult>;
}

/** A mistake in how the command was called: one line with where help is, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The `--stage` option of the commands that read a stage's tables (local/ops/deployment-env.ts commandEnv). */
export const STAGE_USAGE =
  '  --stage S: the table names and settings serverless.yml gives stage S (default FAIRWAY_STAGE) under\n' +
  '  this environment’s; without either, this environment alone.';

/** ` (did you mean X?)` when `name` is a near miss of one of `known` (the functions' nearest-name rule), else ''. */
export function suggestion(name: string, known: readonly string[]): string {
  const nearest = closest(name, known);
  return editDistance(name, nearest) <= Math.max(2, Math.floor(name.length / 3)) ? ` (did you mean ${nearest}?)` : '';
}
