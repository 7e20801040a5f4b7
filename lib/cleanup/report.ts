import type { StepResult } from './engine/engine';

/** What one batch delete deleted (or, in a dry run, would have deleted). Document ids only: never a CPR. */
export interface DeletionEvent {
  job: string;
  operation: string;
  dryRun: boolean;
  /** Ids the batch asked for, before the re-check. */
  requested: number;
  documentIds: readonly string[];
}

/** An operation dropped without deleting anything, because the rule it was made for is no longer configured. */
export interface DroppedOperation {
  job: string;
  documentType: string;
}

/**
 * Where a cleanup job reports; injected, so that only lib/wiring/cleanup.ts touches Powertools.
 * Never given a payload: payloads may hold CPR numbers.
 */
export interface CleanupReport {
  /** One step of the engine: its outcome, the operation it claimed, what it pushed. */
  stepped(result: StepResult): void;
  /** A step failed on its infrastructure (DynamoDB unreachable, throttled); the invocation fails with it. */
  stepFailed(job: string, error: unknown): void;
  deleted(event: DeletionEvent): void;
  dropped(operation: DroppedOperation): void;
  /** An idle database connection failed; its pool replaces it. */
  connectionFailed(database: string, error: unknown): void;
}

/** What the jobs' operations report. */
export type JobReport = Pick<CleanupReport, 'deleted' | 'dropped'>;
