import type { ConfirmChannel } from 'amqplib';
import { errorText } from '../platform/errors';
import { closeWithin } from '../rabbitmq/connection';
import { readyCounts } from '../rabbitmq/ready-counts';
import { type Doorbell, openDoorbell } from '../staging/doorbell';
import { keptLengths } from './kept-length';
import type { MoveCostModel } from './planning/budget';
import type { TargetGroup } from './planning/tenant-backlog';
import type { TargetSummary } from './report';
import { LEASE_MS, leaseTaker } from './stores/lease-store';
import { rotationToPlan, rotationToStore } from './stores/rotation-store';
import { waitRecorder } from './stores/wait-store';
import { type Pass, type Refilled, refill, type Stint, type TargetPassDeps, type TargetTools } from './target-refill';
import { waitFigures } from './waits';

/** A busy target is refilled this long a round at most; then the board and tenant controls are read again. */
export const REFILL_STINT_MS = 2_000;
/** No refill starts with less time than this before the pass deadline. */
const REFILL_MIN_MS = 500;

/** What a target's stint does besides refilling: its lease, its pacing and its waits' record. */
interface StintTools extends TargetTools {
  acquire: ReturnType<typeof leaseTaker>;
  recordWaits: ReturnType<typeof waitRecorder>;
  sleep: (ms: number) => Promise<void>;
  refillPollMs: number;
}

/**
 * One target's part of a pass (SPEC §3): lease → measure → plan → move, the rules in planning/, the
 * AMQP work in moving/. Its state lives in the pass (leases, rotations) and in each target's stint.
 */
export function targetPass(deps: TargetPassDeps, moveCosts: MoveCostModel) {
  const now = deps.now ?? Date.now;
  const tools: StintTools = {
    deps,
    moveCosts,
    now,
    kept: keptLengths(deps.settings, deps.tuning, deps.report, now),
    acquire: leaseTaker(deps.leases, deps.grantOf, now),
    recordWaits: waitRecorder(deps.waits, deps.report, now),
    sleep: deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))),
    // About five readings a horizon: a buffer refilled at half its depth never runs dry between two.
    refillPollMs: Math.max(10, Math.round(deps.settings.buffer.horizonMs / 5)),
  };
  return (group: TargetGroup, pass: Pass) => distributeTarget(tools, group, pass);
}

/** Lease → serve, for one target; a failure ends this target alone. */
async function distributeTarget(tools: StintTools, group: TargetGroup, pass: Pass): Promise<TargetSummary> {
  const stint: Stint = { group, pass, summary: emptySummary(group.target), waitsMs: [] };
  try {
    const lease = await tools.acquire(group.target, pass);
    if (lease !== 'held') return { ...stint.summary, outcome: lease };
  } catch (error) {
    return failed(tools, stint, error);
  }
  // Renewed while this target is served, however long its moves take.
  const heartbeat = setInterval(() => void tools.acquire(group.target, pass).catch(() => undefined), LEASE_MS / 3);
  try {
    return await serve(tools, stint);
  } catch (error) {
    return failed(tools, stint, error);
  } finally {
    clearInterval(heartbeat);
  }
}

function emptySummary(target: string): TargetSummary {
  return {
    target,
    outcome: 'leased-elsewhere',
    created: false,
    planned: 0,
    moved: 0,
    requeued: 0,
    parked: 0,
    queues: [],
  };
}

function failed(tools: TargetTools, { group, summary }: Stint, error: unknown): TargetSummary {
  summary.outcome = 'failed';
  summary.error = errorText(error);
  tools.deps.report.targetFailed(group.target, error);
  return summary;
}

/** The leased target's stint: a first refill, refills while busy, then its rotation and waits written. */
async function serve(tools: StintTools, stint: Stint): Promise<TargetSummary> {
  const { group, summary } = stint;
  const first = await refill(tools, stint);
  if (first === 'target-missing') {
    tools.deps.report.targetMissing(group.target, group.staging);
    summary.outcome = 'target-missing';
    return summary;
  }
  const firstMoved = summary.moved;
  const last = await refillWhileBusy(tools, stint, first);
  await writeRotation(tools, stint);
  // Busy: its workers drained it this stint (a refill after the first moved) and work is left:
  // the next round takes it again at once. A target whose workers stopped backs off instead.
  if (last !== 'target-missing' && last.busy && summary.moved > firstMoved) summary.busy = true;
  await reportWaits(tools, stint);
  return summary;
}

/**
 * A busy buffered target is topped up at its drain's pace from AMQP readings alone: no DynamoDB
 * request until the stint ends (the rotation is written once, then). Returns the last refill's result.
 */
async function refillWhileBusy(tools: StintTools, stint: Stint, first: Refilled): Promise<Refilled> {
  const { now, deps } = tools;
  const { group, pass } = stint;
  const stintEnds = now() + REFILL_STINT_MS;
  let step = first;
  // One channel for the stint's depth reads: opening them per refill costs more than the reads.
  let depths: ConfirmChannel | undefined;
  // Undefined until the first refill after the first; null when the target has none this stint.
  let bell: Doorbell | null | undefined;
  try {
    while (step !== 'target-missing' && step.busy && now() < stintEnds && pass.deadline - now() > REFILL_MIN_MS) {
      await tools.sleep(tools.refillPollMs);
      // Lost (it lapsed, and another execution took it): stop moving.
      if (!pass.held.has(group.target)) break;
      depths ??= await deps.openChannel();
      if (bell === undefined) bell = await doorbellOf(deps, group.target);
      if (bell && !(await answerRings(deps, stint, bell))) bell = null;
      step = await refill(tools, stint, depths);
    }
  } finally {
    if (depths) await closeWithin(depths);
    if (bell) await bell.close();
  }
  return step;
}

/** The target's doorbell on a channel of its own, or null when it cannot be had (a refusal closes only that channel). */
async function doorbellOf(deps: TargetPassDeps, target: string): Promise<Doorbell | null> {
  let channel: ConfirmChannel | undefined;
  try {
    channel = await deps.openChannel();
    const bell = await openDoorbell(channel, target);
    if (bell) return bell;
  } catch {
    // Hints only: without them a new staging queue waits for the next round, as it always could.
  }
  if (channel) await closeWithin(channel);
  return null;
}

/**
 * Adds the staging queues rung since the last refill to the stint's group, those that exist (a
 * passive declare each, on channels of their own: one since reaped would close the depth reads').
 * False when the doorbell failed: the stint goes on without it.
 */
async function answerRings(deps: TargetPassDeps, stint: Stint, bell: Doorbell): Promise<boolean> {
  try {
    const rung = (await bell.rung()).filter((name) => !stint.group.staging.includes(name));
    if (rung.length === 0) return true;
    const depths = await readyCounts(deps.openChannel, rung);
    const found = rung.filter((name) => depths.get(name) !== undefined);
    if (found.length > 0) stint.group = { ...stint.group, staging: [...stint.group.staging, ...found].sort() };
    return true;
  } catch {
    await bell.close();
    return false;
  }
}

/** Writes the rotation the stint moved on, once (an unchanged one needs no write). */
async function writeRotation({ deps }: TargetTools, { group: { target }, pass }: Stint): Promise<void> {
  const read = pass.storedRotations.get(target);
  const moved = pass.rotations.get(target);
  pass.storedRotations.delete(target);
  if (read === undefined || moved === undefined) return;
  const next = rotationToStore(rotationToPlan(moved), read);
  if (!next) return;
  // Unknown until the write answers (a failed one may have written): the next pass reads it.
  pass.rotations.delete(target);
  if (await deps.rotations.writeRotation(target, next, read)) {
    pass.rotations.set(target, { ...next, version: read.version + 1 });
  } else deps.report.rotationConflict(target);
}

/** The stint's waits into its summary and store, and the moves a closed channel cut short. */
async function reportWaits(tools: StintTools, { group, summary, waitsMs }: Stint): Promise<void> {
  const wait = waitFigures(waitsMs);
  if (wait) {
    summary.wait = wait;
    await tools.recordWaits(group.target, summary.queues, summary.noisy?.byBacklog);
  }
  const cutShort = summary.queues.filter((q) => q.stopReason === 'channel-closed').map((q) => q.name);
  if (cutShort.length > 0) tools.deps.report.movesCutShort(group.target, cutShort);
}
