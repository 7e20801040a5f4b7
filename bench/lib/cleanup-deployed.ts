import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { Env } from '../../lib/platform/config';
import { projectRoot } from '../../local/paths';
import { paramResolver, serviceFunctions } from '../../local/service';

/** A cleanup function as deployed with the default params: its schedule and its environment. */
export interface DeployedCleanup {
  /** The function's name in serverless.yml, e.g. `registryStatus90Cleanup`. */
  fn: string;
  /** e.g. `rate(5 minutes)`. */
  rate: string;
  intervalMs: number;
  /**
   * The function's environment with `${param:…}` resolved; settings left empty by default (URLs,
   * document types) and CloudFormation references (the table) are left out for the bench to set.
   */
  env: Env;
  /** The numeric settings of this job alone (not of the block every cleanup function shares), for the notes. */
  own: Record<string, string>;
}

interface ServerlessFile {
  custom: { cleanup?: Record<string, unknown> };
  functions: Record<string, { environment?: Record<string, unknown> }>;
}

/**
 * Reads serverless.yml so that the bench runs what ships: the schedule and every setting of `fn`,
 * whatever they are named. Fails on a function without a schedule or an environment.
 */
export function deployedCleanup(fn: string): DeployedCleanup {
  const file = parse(readFileSync(join(projectRoot(), 'serverless.yml'), 'utf8'), { merge: true }) as ServerlessFile;
  const environment = file.functions[fn]?.environment;
  const schedule = serviceFunctions().find((f) => f.name === fn)?.schedule;
  if (!environment || !schedule) throw new Error(`serverless.yml has no scheduled function ${fn} with an environment`);
  const resolve = paramResolver();
  const env = Object.fromEntries(
    Object.entries(environment)
      .filter(([, value]) => typeof value !== 'object')
      .map(([name, value]) => [name, resolve(value)] as const)
      .filter(([, value]) => value !== ''),
  );
  const shared = new Set(Object.keys(file.custom.cleanup ?? {}));
  const own = Object.fromEntries(
    Object.entries(env).filter(([name, value]) => !shared.has(name) && /^\d+$/.test(value)),
  );
  return { fn, rate: schedule.rate, intervalMs: schedule.everyMs, env, own };
}

/** `NAME value, …` of a job's own settings, for the notes. */
export const describeOwn = (deployed: DeployedCleanup): string =>
  Object.entries(deployed.own)
    .map(([name, value]) => `${name} ${value}`)
    .join(', ');
