import type { Env } from '../platform/config';
import { ConfigError } from '../platform/errors';

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

/**
 * Every variable a Fairway function reads: the keys of every part's schema, listed as data so the
 * cold-start check of variable names (variables.ts) pulls no part's settings into another part's
 * bundle (the distributor's would hold the cleanup jobs' otherwise). test/unit/wiring/variables.test.ts
 * checks the list against the schemas: a setting added or removed there fails it until listed here.
 */
export const knownVariables: readonly string[] = [
  // the router (lib/routing/config.ts) and what it shares
  'AWS_REGION',
  'DYNAMODB_ENDPOINT',
  'AMQP_URL',
  'RABBITMQ_MANAGEMENT_URL',
  'RABBITMQ_VHOST',
  'RABBITMQ_SECRET_ARN',
  'DISTRIBUTOR_FUNCTION_NAME',
  'LAMBDA_ENDPOINT',
  'STAGING_TABLE',
  'DIRECT_ROUTING',
  'TENANT_TABLE',
  'DISTRIBUTOR_TABLE',
  'TENANT_PRIORITY_RESET_SECONDS',
  'TENANT_PRIORITY_THRESHOLDS',
  'TENANT_PRIORITY_QUIET_LEVEL',
  'TENANT_PRIORITY_AMQP_PRIORITIES',
  'ROUTER_TARGETS',
  'ROUTER_MISSING_TENANT',
  'ROUTER_STAGING_PRIORITIES',
  // the distributor (lib/distributor/config.ts)
  'DISTRIBUTOR_PLANNER',
  'DISTRIBUTOR_FAIR_BY',
  'DISTRIBUTOR_MOVE_PRIORITY',
  'DISTRIBUTOR_DEFAULT_MAX_LENGTH',
  'DISTRIBUTOR_BUFFER_HORIZON_MS',
  'DISTRIBUTOR_TARGETS',
  'DISTRIBUTOR_WEIGHTS',
  'DISTRIBUTOR_MISSING_TARGET',
  'DISTRIBUTOR_NEW_TARGET_ARGUMENTS',
  'DISTRIBUTOR_MAX_EXECUTIONS',
  // the cleanup jobs (lib/cleanup/config.ts, lib/cleanup/jobs/config.ts)
  'NXRG_DATABASE_URL',
  'NXRG_DATABASE_SECRET_ARN',
  'OPENXDS_DATABASE_URL',
  'OPENXDS_DATABASE_SECRET_ARN',
  'CLEANUP_TABLE',
  'CLEANUP_DRY_RUN',
  'CLEANUP_FUNCTION_TIMEOUT_SECONDS',
  'NXRG_NAMES',
  'NXRG_DOCUMENT_TYPES',
  'CLEANUP_TIMEBASED_DOCUMENT_TYPES',
  'OPENXDS_NAMES',
];

/**
 * Variables 0.2 removed (issue 35), each with what replaced it. A deployment that still sets one is
 * refused at cold start, saying so, rather than the value being ignored in silence; for one release,
 * then the names are simply unknown. The fixed values are documented in docs/configuration.md.
 */
export const REMOVED_IN = '0.2';

const fixed = (what: string) => `the distributor now ${what}`;

export const REMOVED_VARIABLES: Readonly<Record<string, string>> = {
  // The router and the staging lifecycle.
  TENANT_PRIORITY_SKIP_WINDOW_SECONDS:
    'the skip window is now derived: a 25th of TENANT_PRIORITY_RESET_SECONDS, at most 60 s',
  STAGING_QUEUE_CACHE_SECONDS: 'the router now remembers a declared staging queue for a fixed 60 s',
  PUBLISH_CONFIRM_TIMEOUT_MS: 'the router now waits a fixed 10 s (a third of its timeout) for confirms',
  STAGING_TOUCH_SECONDS: "a router now touches a staging queue's record at most every 10 minutes (fixed)",
  DISTRIBUTOR_REAP_AFTER_SECONDS:
    'an empty, unused staging queue untouched for a fixed hour is reaped (0, never, is no longer offered)',
  DISTRIBUTOR_REQUEST_GRACE_MS: 'a requested pass not started within a fixed 10 s is asked for again',
  DIRECT_ROUTING_MAX_DEPTH: "direct routing's windows are now fixed (depth 20); DIRECT_ROUTING alone chooses",
  DIRECT_ROUTING_GRANT_SECONDS: "direct routing's windows are now fixed (a grant lasts 5 minutes)",
  DIRECT_ROUTING_READ_MS: "direct routing's windows are now fixed (a grant read serves 1 s)",
  DIRECT_ROUTING_PUBLISH_MS: "direct routing's windows are now fixed (a direct publish has 1 s to be confirmed)",
  // The distributor.
  DISTRIBUTOR_QUIET_BACKLOG: fixed('counts a staging queue of at most 10 messages as quiet'),
  DISTRIBUTOR_QUIET_RESERVE_PERCENT: fixed('keeps a fixed 5 % of a target for quiet queues (backlog mode)'),
  DISTRIBUTOR_REFILL_THRESHOLD_PERCENT: fixed('leaves a target alone below a fixed 10 % of free room'),
  DISTRIBUTOR_MOVE_CONCURRENCY: fixed('moves 16 staging queues at once (the measured best)'),
  DISTRIBUTOR_MAX_PREFETCH: fixed("caps a mover's prefetch at 500 and at its queue's share"),
  DISTRIBUTOR_SAFETY_MARGIN_MS: fixed('stops moving a fixed 10 s before the invocation ends'),
  DISTRIBUTOR_IDLE_STOP_MS: fixed('stops a mover after a fixed 2 s without a message'),
  DISTRIBUTOR_FOLLOW_UP_DELAY_MS: fixed('follows up a target with work after a fixed 1 s'),
  DISTRIBUTOR_FOLLOW_UP_MAX_DELAY_MS: fixed('backs follow-ups off to at most a fixed 20 s'),
  DISTRIBUTOR_WAIT_BOUND_MS: fixed('waits a fixed 6 s for a target due before an execution ends'),
  DISTRIBUTOR_BOARD_POLL_MS: fixed('reads the work board every 250 ms while it waits'),
  DISTRIBUTOR_TARGET_CONCURRENCY: fixed('works on 8 targets at once'),
  DISTRIBUTOR_BACKSTOP_INTERVAL_MS: fixed("runs the backstop at most once a minute, the schedule's period"),
  DISTRIBUTOR_STAGING_CACHE_SECONDS: fixed("caches a target's staging queues and shape for a fixed 60 s"),
  DISTRIBUTOR_WAIT_ALARM_SECONDS: fixed('warns and alarms on a staging wait over a fixed 60 s'),
  // The cleanup engine and jobs.
  CLEANUP_MAX_ATTEMPTS: 'an operation is dead-lettered after a fixed 5 attempts',
  CLEANUP_LEASE_SECONDS: 'a claim now lasts CLEANUP_FUNCTION_TIMEOUT_SECONDS + 3 minutes',
  CLEANUP_TIME_BUDGET_SECONDS:
    'no step starts after 45 s, or less under a short CLEANUP_FUNCTION_TIMEOUT_SECONDS (the timeout less the database timeout)',
  CLEANUP_DATABASE_TIMEOUT_SECONDS: 'a statement now has 30 s, at most half of CLEANUP_FUNCTION_TIMEOUT_SECONDS',
  CLEANUP_MAX_PAYLOAD_BYTES: "an operation's payload is capped at a fixed 350,000 bytes (DynamoDB's 400 KB item)",
  CLEANUP_STEPS_PER_INVOCATION: 'an invocation takes one step, as SPEC §4 says; the schedule brings the next',
  CLEANUP_MAX_DELETES_PER_STEP: 'a step deletes at most a fixed 1,000,000 documents',
  CLEANUP_TIMEBASED_BATCH_SIZE:
    'a range delete is a fixed 10,000 documents; set batchSize per type in CLEANUP_TIMEBASED_DOCUMENT_TYPES',
  CLEANUP_STATUS90_SUFFIX_PAGE_SIZE: 'a status-90 suffix page is a fixed 100,000 CPR numbers',
  CLEANUP_STATUS90_CITIZEN_BATCH_SIZE: 'a status-90 citizen batch is a fixed 100,000 citizens',
  CLEANUP_STATUS90_BATCH_SIZE: 'a status-90 range delete is a fixed 10,000 documents',
  CLEANUP_REPOSITORY_PAGE_SIZE: 'a repository settle range spans a fixed 1,000,000 deletions',
  CLEANUP_REPOSITORY_BATCH_SIZE: 'a repository round is a fixed 5,000 deletions',
  CLEANUP_REPOSITORY_RECHECK_INTERVAL_MINUTES: 'the repository recheck runs at most hourly (fixed)',
  NXRG_DECEASED_STATUS: 'a deceased citizen is status 90, as SPEC §4 says (fixed)',
};
