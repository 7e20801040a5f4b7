import type { Overflow } from '../rabbitmq/queue-policies';
import type { StopReason } from './moving/move-request';
import type { PlannerMode } from './planning/planner';
import type { WaitFigures } from './waits';

/** What the distributor tells its operators; the service logs it and turns it into metrics. */
export interface DistributorReport {
  /** Distribution to a target failed; the next pass retries it. */
  targetFailed(target: string, error: unknown): void;
  /** Staging queues hold messages for a target that does not exist (missing targets are skipped). */
  targetMissing(target: string, staging: readonly string[]): void;
  /** Another pass wrote the target's rotation since this one read it; the other's stands. */
  rotationConflict(target: string): void;
  /** The lease could not be given back; it expires by itself. */
  leaseNotReleased(target: string, error: unknown): void;
  /** A closed channel or connection ended these staging queues' moves early; nothing is lost, the next pass goes on. */
  movesCutShort(target: string, queues: readonly string[]): void;
  /** The invocation has no time left beyond the safety margin: the pass plans but moves nothing. */
  noTimeToMove(remainingMs: number, safetyMarginMs: number): void;
  /** The pass could not ask for the target's next pass; the schedule's next pass covers it. */
  followUpFailed(target: string, error: unknown): void;
  /** A tuned target's length this pass: applied (mode apply) or only what it would be (mode noop). */
  lengthTuned(tuned: LengthTuned): void;
  /** A pass request asked to wait longer than the maximum (MAX_PASS_DELAY_MS): the pass waited the maximum. */
  requestDelayClamped(requestedMs: number, maxMs: number): void;
  /** The tenant controls could not be read: the pass used the last controls read (none in a new container). */
  controlsUnreadable(error: unknown): void;
  /** A tenant control entry is not well formed: it is left out, the others apply. */
  controlSkipped(key: string, problem: string): void;
  /** The target's measured staging waits could not be kept for `fairway tenants`; the next pass writes them again. */
  waitsNotRecorded(target: string, error: unknown): void;
  /** A pass ended. */
  passed(summary: PassSummary): void;
}

export interface LengthTuned {
  target: string;
  mode: 'apply' | 'noop';
  /** Messages per second consumed, over the configured window; undefined when the broker has no rate yet. */
  rate?: number;
  /** rate × goal, rounded and clamped. */
  goal?: number;
  previous: number;
  /** The length used this pass (apply), or that would be (noop). */
  next: number;
}

export interface QueueSummary {
  name: string;
  depth: number;
  weight: number;
  planned: number;
  moved: number;
  requeued: number;
  /** Set aside in the target's parking queue: the broker would refuse them from the distributor. */
  parked: number;
  stopReason?: StopReason;
  error?: string;
  /** The wait in staging of the messages moved that carried the router's staged-at stamp; absent when none did. */
  wait?: WaitFigures;
}

export type TargetOutcome = 'distributed' | 'leased-elsewhere' | 'target-missing' | 'below-threshold' | 'failed';

export interface TargetSummary {
  target: string;
  outcome: TargetOutcome;
  created: boolean;
  maxLength?: number;
  /** The target's effective `max-length-bytes`, when it has one. */
  maxLengthBytes?: number;
  /** What the broker does at the target's limits (its effective `overflow`). */
  overflow?: Overflow;
  depth?: number;
  capacity?: number;
  planned: number;
  moved: number;
  requeued: number;
  /** Set aside in the target's parking queue: the broker would refuse them from the distributor. */
  parked: number;
  queues: QueueSummary[];
  /** Over every message moved to the target this pass that carried a staged-at stamp. */
  wait?: WaitFigures;
  error?: string;
  /** The next pass for this target was asked for, this many ms from the end of this one. */
  followUpMs?: number;
}

export interface PassSummary {
  owner: string;
  /** The request that started this pass; absent for a scheduled pass. */
  request?: { requestId: string; target: string; delayMs: number };
  planner: PlannerMode;
  durationMs: number;
  planned: number;
  moved: number;
  requeued: number;
  /** Set aside in the target's parking queue: the broker would refuse them from the distributor. */
  parked: number;
  targets: TargetSummary[];
}
