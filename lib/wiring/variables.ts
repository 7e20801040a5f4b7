import type { Env } from '../platform/config';
import { ConfigError } from '../platform/errors';
import { knownVariables } from './known-variables';
import { REMOVED_IN, REMOVED_VARIABLES } from './removed-variables';

/**
 * The prefixes of Fairway's variable names: a variable that starts with one and is not known is a
 * typo. `AWS_REGION` and `LAMBDA_ENDPOINT` share prefixes with the variables Lambda itself sets,
 * so those two prefixes cannot be claimed.
 */
export const FAIRWAY_PREFIXES = [
  'AMQP_',
  'RABBITMQ_',
  'DYNAMODB_',
  'DISTRIBUTOR_',
  'ROUTER_',
  'TENANT_',
  'STAGING_',
  'DIRECT_ROUTING',
  'NXRG_',
  'OPENXDS_',
  'CLEANUP_',
] as const;

/**
 * Refuses, at cold start, a variable with a Fairway prefix that no function reads (a misspelled
 * setting would otherwise be ignored, and its default used in silence), naming the closest known one,
 * or, for a variable a release removed, what replaced it.
 * Any function may be given another's variables: the local stack runs them all in one environment.
 */
export function checkVariableNames(env: Env): void {
  const known = new Set(knownVariables);
  const problems = Object.keys(env)
    .filter(
      (name) =>
        Object.hasOwn(REMOVED_VARIABLES, name) ||
        (FAIRWAY_PREFIXES.some((prefix) => name.startsWith(prefix)) && !known.has(name)),
    )
    .sort()
    .map((name) =>
      Object.hasOwn(REMOVED_VARIABLES, name)
        ? `${name}: was removed in ${REMOVED_IN}: ${REMOVED_VARIABLES[name]}; unset it`
        : `${name}: is not a variable Fairway reads (did you mean ${closest(name, knownVariables)}?)`,
    );
  if (problems.length > 0)
    throw new ConfigError(problems, 'Rename or remove these environment variables and redeploy.');
}

/** The known name nearest to `name` by edit distance (the first in `known` on a tie). */
export function closest(name: string, known: readonly string[]): string {
  let best = known[0]!;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = editDistance(name, candidate);
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

/** Levenshtein distance: insertions, deletions and substitutions of one character each cost 1. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
