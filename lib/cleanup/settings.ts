import type { RepositoryJobConfig, Status90JobConfig, TimebasedJobConfig } from './jobs/config';
import type { REPOSITORY_JOB } from './jobs/repository';
import type { STATUS90_JOB } from './jobs/status90';
import type { TIMEBASED_JOB } from './jobs/timebased';

/**
 * The cleanup part's typed settings. lib/wiring/cleanup.ts translates the checked configuration
 * (lib/cleanup/config.ts, cleanup-jobs.ts: environment-variable names) into these once per
 * container; nothing below it reads an environment name.
 */

/** How a function steps its job's stack (the engine's settings, and an invocation's bounds). */
export interface StepSettings {
  /** The DynamoDB table holding every job's stack. */
  table: string;
  /** Count what would be deleted, delete nothing. */
  dryRun: boolean;
  /** Attempts before an operation is dead-lettered. */
  maxAttempts: number;
  /** How long a claim holds; at least the function's timeout (checked at cold start). */
  leaseMs: number;
  /** Cap on one child's JSON payload, below DynamoDB's 400 KB item limit. */
  maxPayloadBytes: number;
  /** Steps one invocation may take. */
  stepsPerInvocation: number;
  /** No new step starts once an invocation has run this long. */
  timeBudgetMs: number;
}

/** Where the two databases are, and how long a statement or connection attempt may take. */
export interface DatabaseSettings {
  nxrgUrl: string;
  openxdsUrl: string;
  timeoutMs: number;
}

/** A job's own settings, read and checked (lib/cleanup/jobs/config.ts), tagged with the job they are for. */
export type JobSettings =
  | { name: typeof TIMEBASED_JOB; config: TimebasedJobConfig }
  | { name: typeof STATUS90_JOB; config: Status90JobConfig }
  | { name: typeof REPOSITORY_JOB; config: RepositoryJobConfig };
