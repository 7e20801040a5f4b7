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
  functions: Record<
    string,
    {
      timeout?: number | string;
      events?: Array<{ schedule?: { rate: string; enabled?: unknown } }>;
      environment?: Record<string, unknown>;
    }
  >;
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

/** The router count serverless.yml appends to the distributor's DIRECT_ROUTING: the router function's reserved concurrency. */
const ROUTER_COUNT_PARAM = `$\{param:routerReservedConcurrency}`;

/**
 * The distributor's DIRECT_ROUTING as serverless.yml gives it on `stage`, but with `routers` for the
 * router's reserved concurrency it appends: the most router invocations that run at once where the
 * caller runs them (a bench's concurrency, the local poller's one), the bound the grant rule relies on
 * (lib/work-board/grants.ts directPublishesFit).
 */
export function distributorDirectRouting(stage: string, routers: number): string {
  const file = parse(readFileSync(join(projectRoot(), 'serverless.yml'), 'utf8'), { merge: true }) as ServerlessFile;
  const value = file.functions.distributor?.environment?.DIRECT_ROUTING;
  if (typeof value !== 'string' || !value.endsWith(`:${ROUTER_COUNT_PARAM}`)) {
    throw new Error(
      `serverless.yml gives the distributor DIRECT_ROUTING ${JSON.stringify(value)}, not "<mode>:${ROUTER_COUNT_PARAM}": ` +
        'make local/service.ts distributorDirectRouting derive what it now gives',
    );
  }
  return paramResolver(stage)(value.replace(ROUTER_COUNT_PARAM, String(routers)));
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
      // A timeout may come from a param (the cleanup functions' `cleanupTimeoutSeconds`).
      timeoutSeconds: Number(resolve(fn.timeout ?? file.provider.timeout ?? 6)),
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

/**
 * The environment serverless.yml gives every function on `stage` (provider and function blocks,
 * params resolved for the stage, tables by their deployed names), merged into one: what a deployed
 * function reads for a variable the operator's shell does not set. Values that are not plain
 * settings (an ARN from GetAtt) are left out.
 */
export function stageEnvironment(stage = 'dev'): Record<string, string> {
  const root = projectRoot();
  const file = parse(readFileSync(join(root, 'serverless.yml'), 'utf8'), { merge: true }) as ServerlessFile & {
    provider: { environment?: Record<string, unknown> };
  };
  const tables = parse(readFileSync(join(root, 'infra/dynamodb.yml'), 'utf8')) as {
    Resources: Record<string, { Properties?: { TableName?: string } }>;
  };
  const params = paramResolver(stage);
  const resolve = (value: string): string =>
    params(value)
      .replace(/\$\{sls:stage\}/g, stage)
      .replace(/\$\{self:([\w.]+)\}/g, (_, path: string) =>
        resolve(
          String(
            path.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], file),
          ),
        ),
      );
  const env: Record<string, string> = {};
  const blocks = [file.provider.environment, ...Object.values(file.functions).map((fn) => fn.environment)];
  for (const [name, value] of blocks.flatMap((block) => Object.entries(block ?? {}))) {
    const table = (value as { Ref?: string } | null)?.Ref;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      env[name] = resolve(String(value));
    } else if (table !== undefined && tables.Resources[table]?.Properties?.TableName) {
      env[name] = resolve(tables.Resources[table].Properties.TableName);
    }
  }
  return env;
}
