import type { Overflow } from '../rabbitmq/queue-policies';
import type { StopReason } from './moving/move-request';
import type { PlannerMode } from './planning/planner';
import type { NoisyTenants, WaitFigures } from './waits';

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
  /** The reaper could not finish reaping a staging queue; its mark goes stale and the next backstop retries. */
  reapFailed(target: string, queue: string, error: string): void;
  /** A closed channel or connection ended these staging queues' moves early; nothing is lost, the next pass goes on. */
  movesCutShort(target: string, queues: readonly string[]): void;
  /** The invocation has no time left beyond the safety margin: the pass plans but moves nothing. */
  noTimeToMove(remainingMs: number, safetyMarginMs: number): void;
  /** An execution could not read or write the work board, or start its successor; the schedule covers it. */
  boardFailed(action: string, error: unknown): void;
  /** A tuned target's length this pass: applied (mode apply) or only what it would be (mode noop). */
  lengthTuned(tuned: LengthTuned): void;
  /** The backstop listed the vhost (at most once a minute over every execution). */
  backstopListed(listed: BackstopListed): void;
  /** The tenant controls could not be read: the pass used the last controls read (none in a new container). */
  controlsUnreadable(error: unknown): void;
  /** A tenant control entry is not well formed: it is left out, the others apply. */
  controlSkipped(key: string, problem: string): void;
  /** The target's measured staging waits could not be kept for `fairway tenants`; the next pass writes them again. */
  waitsNotRecorded(target: string, error: unknown): void;
  /** A pass ended. */
  passed(summary: PassSummary): void;
  /** An execution ended (docs/distributor.md "Run model"). */
  executionEnded(summary: ExecutionSummary): void;
}

export interface BackstopListed {
  queues: number;
  /** Staging queues the listing showed that the registry did not have: recorded now. */
  recorded: number;
  /** Targets with listed staged messages, marked as wanting a pass. */
  wanted: number;
}

export interface ExecutionSummary {
  /** The slot it held; undefined when every slot was held and it ended at once. */
  slot?: number;
  rounds: number;
  /** Target passes over its rounds, the messages they moved and parked. */
  targetPasses: number;
  moved: number;
  parked: number;
  /** Each round's pass (the log line of the execution leaves them out: each pass logs its own). */
  summaries: PassSummary[];
  durationMs: number;
  /** How it ended: nothing due soon, every slot held, near its time limit (a successor started), or the board failed. */
  ending: 'idle' | 'no-slot' | 'successor' | 'board-failed';
  /** Of its time, how much it waited for a due target. */
  waitedMs: number;
  /** Grants it wrote (direct routing), and grants it revoked before passing a target. */
  grants: number;
  revocations: number;
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

/** `granted`: a router may be publishing to it under another execution's grant; revoked, it is passed after the wait. */
export type TargetOutcome =
  | 'distributed'
  | 'leased-elsewhere'
  | 'granted'
  | 'target-missing'
  | 'below-threshold'
  | 'failed';

export interface TargetSummary {
  target: string;
  outcome: TargetOutcome;
  created: boolean;
  maxLength?: number;
  /** What the target is filled to without a buffer or a tuned length: its limit, configured or default max length. */
  untunedMaxLength?: number;
  /** The target's effective `max-length`, when it has one (its broker limit; `maxLength` is what the pass fills it to). */
  lengthLimit?: number;
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
  /** Messages the pass measured in the target's staging queues (paused queues not counted). */
  staged?: number;
  /** Its tenants that hold the most in staging and waited the longest this pass (waits.ts). */
  noisy?: NoisyTenants;
  /** Measure → plan → move rounds over the target this pass: more than one while its buffer was topped up. */
  refills?: number;
  /** A buffered target that moved and keeps work staged: its next round takes it at once (target-pass.ts). */
  busy?: boolean;
  /** The target's next pass is due this many ms after this one started (work left staged). */
  dueInMs?: number;
  /** The pass granted no target: a staging queue may weigh 0, or the tenant controls were unreadable (lib/work-board/grants.ts). */
  grantsWithheld?: boolean;
}

export interface PassSummary {
  owner: string;
  planner: PlannerMode;
  durationMs: number;
  planned: number;
  moved: number;
  requeued: number;
  /** Set aside in the target's parking queue: the broker would refuse them from the distributor. */
  parked: number;
  targets: TargetSummary[];
}
