import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { projectRoot } from './paths';

/** A function of serverless.yml as the local stack runs it: its timeout and, if any, its schedule. */
export interface ServiceFunction {
  name: string;
  /** The deployed name, e.g. `fairway-dev-router` (also its log group's suffix). */
  deployedName: string;
  timeoutSeconds: number;
  schedule?: { rate: string; everyMs: number; enabled: boolean };
}

interface ServerlessFile {
  service: string;
  params: Record<string, Record<string, unknown>>;
  provider: { timeout?: number };
  functions: Record<string, { timeout?: number; events?: Array<{ schedule?: { rate: string; enabled?: unknown } }> }>;
}

/** Resolves `${param:…}` in a serverless.yml value as serverless does for `stage` (its block over `default`). */
export function paramResolver(stage = 'dev'): (value: unknown) => string {
  const file = parse(readFileSync(join(projectRoot(), 'serverless.yml'), 'utf8')) as ServerlessFile;
  const params = { ...file.params.default, ...file.params[stage] };
  return (value: unknown) =>
    String(value).replace(/\$\{param:(\w+)\}/g, (_, name: string) => {
      if (!(name in params)) throw new Error(`serverless.yml refers to \${param:${name}}, which has no value`);
      return String(params[name]);
    });
}

/** Reads serverless.yml's functions with `${param:…}` resolved for `stage` (its block over `default`). */
export function serviceFunctions(stage = 'dev'): ServiceFunction[] {
  const file = parse(readFileSync(join(projectRoot(), 'serverless.yml'), 'utf8')) as ServerlessFile;
  const resolve = paramResolver(stage);
  return Object.entries(file.functions).map(([name, fn]) => {
    const schedule = fn.events?.find((e) => e.schedule)?.schedule;
    const rate = schedule && resolve(schedule.rate);
    return {
      name,
      deployedName: `${file.service}-${stage}-${name}`,
      timeoutSeconds: fn.timeout ?? file.provider.timeout ?? 6,
      ...(schedule && rate
        ? { schedule: { rate, everyMs: rateToMs(rate), enabled: resolve(schedule.enabled ?? true) !== 'false' } }
        : {}),
    };
  });
}

const unitMs: Record<string, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** `rate(5 minutes)` → 300000. Cron expressions are not run locally: say so rather than guess. */
export function rateToMs(expression: string): number {
  const match = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(expression.trim());
  if (!match) throw new Error(`Schedule ${JSON.stringify(expression)} is not a rate(N minutes|hours|days) expression`);
  return Number(match[1]) * unitMs[match[2]!]!;
}
