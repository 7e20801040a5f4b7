import { type DirectRoutingSettings, roundGrants } from '../work-board/grants';
import { type DistributorEvent, type PassTrigger, WORK_EVENT } from '../work-board/pass-trigger';
import { type Board, dueTargets, isDue, liveSlots, nextDueAt, type Served } from '../work-board/work-board';
import type { DynamoWorkBoard } from '../work-board/work-board-store';
import { type BackstopDeps, runBackstop } from './backstop';
import type { RunModelSettings } from './config';
import type { Distributor, DistributorSession } from './pass';
import { lingerMs } from './planning/budget';
import type { DistributorReport, ExecutionSummary, PassSummary } from './report';
import { LEASE_MS, type SlotKeeper, slotKeeper } from './stores/lease-store';

/** A round is not started with less time than this before the pass deadline: a successor takes it. */
export const MIN_ROUND_MS = 2_000;
/** The first wait for a lease another execution, now gone from the board, still holds. */
const FIRST_RETRY_MS = 20;

export interface ExecutionDeps {
  board: Pick<
    DynamoWorkBoard,
    'claimSlot' | 'renewSlot' | 'read' | 'writeServed' | 'revoke' | 'leave' | 'handOff' | 'clearStarting' | 'request'
  >;
  distributor: Pick<Distributor, 'session'>;
  settings: RunModelSettings;
  /** Direct routing under a grant (lib/work-board/grants.ts); off, a grant left from before is still revoked. */
  direct: DirectRoutingSettings;
  /** Starts a successor near the time limit; without it (schedule alone) the schedule follows. */
  trigger?: PassTrigger;
  /** How long a started successor may take to claim a slot (REQUEST_GRACE_MS). */
  graceMs: number;
  report: Pick<DistributorReport, 'boardFailed' | 'executionEnded'>;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** One execution's state, passed from step to step. */
interface Run {
  deps: ExecutionDeps;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  summary: ExecutionSummary;
  startedAt: number;
  slot: number;
  /** Renews the slot near its end, through rounds too. */
  keeper: SlotKeeper;
  session: DistributorSession;
  /** The work board as last read or written. */
  board: Board;
  /** Whether the slot is no longer this execution's to free. */
  left: boolean;
  /** Targets another execution held the lease of in the last round: theirs to serve. */
  elsewhere: Set<string>;
  retryMs: number;
  /** When it last had a target due: a stay for the next request counts from there. */
  busyAt: number;
}

/**
 * One distributor execution (docs/distributor.md "Run model"): claims a slot (none free: ends at
 * once), then serves every due target of the work board, least recently served first, round after
 * round, until nothing is due within the wait bound (nor a request within what leaving would cost
 * its leases, lingerMs in planning/budget.ts) or its time runs out; it leaves only when no request can be
 * stranded. Leases are held for the execution's life.
 */
export async function runExecution(deps: ExecutionDeps, remainingMs: number): Promise<ExecutionSummary> {
  const now = deps.now ?? Date.now;
  const startedAt = now();
  const summary = emptySummary();
  // The slot lapses soon after a killed execution stops renewing it: routers then start another.
  const slotUntil = Math.min(startedAt + LEASE_MS, startedAt + remainingMs);
  const claim = await deps.board.claimSlot(deps.settings.maxExecutions, startedAt, slotUntil);
  if (!claim) return ended({ summary, now, startedAt }, 'no-slot');
  summary.slot = claim.slot;
  const run: Run = {
    deps,
    now,
    sleep: deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))),
    summary,
    startedAt,
    slot: claim.slot,
    keeper: slotKeeper({ board: deps.board, slot: claim.slot, until: slotUntil, endsAt: startedAt + remainingMs, now }),
    session: deps.distributor.session(remainingMs),
    board: claim.board,
    left: false,
    elsewhere: new Set(),
    retryMs: FIRST_RETRY_MS,
    busyAt: startedAt,
  };
  return serveBoard(run);
}

function emptySummary(): ExecutionSummary {
  const counts = { rounds: 0, targetPasses: 0, moved: 0, parked: 0, waitedMs: 0, grants: 0, revocations: 0 };
  return { ...counts, summaries: [], durationMs: 0, ending: 'idle' };
}

type Ending = ExecutionSummary['ending'];

function ended(run: Pick<Run, 'summary' | 'now' | 'startedAt'>, ending: Ending): ExecutionSummary {
  run.summary.ending = ending;
  run.summary.durationMs = run.now() - run.startedAt;
  return run.summary;
}

/** Steps until the execution ends; then its leases are given back and its slot freed. */
async function serveBoard(run: Run): Promise<ExecutionSummary> {
  const { board, report } = run.deps;
  try {
    for (;;) {
      const ending = await step(run);
      if (ending !== undefined) return ended(run, ending);
    }
  } catch (error) {
    report.boardFailed('serve the work board', error);
    return ended(run, 'board-failed');
  } finally {
    await run.session.close();
    // A slot left held would keep routers from starting an execution until it lapses.
    if (!run.left) await board.handOff(run.slot).catch((error: unknown) => report.boardFailed('free its slot', error));
  }
}

/** One step: a round over the due targets, a wait for the next due one or request, or leaving. */
async function step(run: Run): Promise<Ending | undefined> {
  const { settings } = run.deps;
  if (!(await run.keeper.keep())) {
    run.left = true; // the slot is another execution's now: not ours to free
    return 'board-failed';
  }
  const at = run.now();
  const due = dueTargets(run.board, at, run.elsewhere);
  if (due.length > 0) {
    if (run.session.deadline - at < MIN_ROUND_MS) return handOff(run);
    await round(run, due);
    run.busyAt = run.now();
    return undefined;
  }
  const next = nextDueAt(run.board, at, run.elsewhere);
  if (next !== undefined && next - at <= settings.waitBoundMs) {
    if (next > run.session.deadline - MIN_ROUND_MS) return handOff(run);
    await poll(run, next - at);
    return undefined;
  }
  // Leaving gives back every lease a new execution takes again: with many held, staying a
  // while for the next request costs less (it is served within a poll, as a due target is).
  // Alone only: with another in flight, leaving lets the two become one (its leases are
  // taken once by the other) instead of two staying, each trying the other's leases.
  const stayUntil = run.busyAt + lingerMs(run.session.leases, settings.waitBoundMs);
  const alone = liveSlots(run.board, at).every((s) => s === run.slot);
  if (alone && at < stayUntil && stayUntil <= run.session.deadline - MIN_ROUND_MS) {
    await poll(run, stayUntil - at);
    return undefined;
  }
  return leave(run);
}

/** Sleeps a poll (at most `untilMs`) and reads the board. */
async function poll(run: Run, untilMs: number): Promise<void> {
  const waitMs = Math.min(untilMs, run.deps.settings.boardPollMs);
  await run.sleep(waitMs);
  run.summary.waitedMs += waitMs;
  run.board = await run.deps.board.read();
}

/**
 * Leaves when nothing came in since the board was read. Leases are given back once the slot is
 * free (serveBoard): a leave that fails, as it does under steady traffic, keeps them for the next
 * round. An execution started meanwhile that finds one still held waits a poll and takes it.
 */
async function leave(run: Run): Promise<Ending | undefined> {
  const { board, settings } = run.deps;
  const rule = run.elsewhere.size > 0 ? 'others-only' : 'version-or-others';
  if (await board.leave(run.slot, rule, run.board.version, settings.maxExecutions, run.now())) {
    run.left = true;
    return 'idle';
  }
  // A request came in since the last read (or the holder of a target left): serve it. A
  // holder that just left is giving its leases back within milliseconds; one that was killed
  // holds them until they lapse: retry soon, then less often.
  if (run.elsewhere.size > 0) {
    await run.sleep(run.retryMs);
    run.retryMs = Math.min(2 * run.retryMs, settings.boardPollMs);
  } else run.retryMs = FIRST_RETRY_MS;
  run.elsewhere = new Set();
  run.board = await board.read();
  return undefined;
}

/**
 * One pass over the due targets (granted ones revoked first: roundGrants); writes what it served;
 * keeps the board then and the targets leased elsewhere.
 */
async function round(run: Run, due: readonly string[]): Promise<void> {
  const { board, direct } = run.deps;
  const at = run.now();
  const grants = roundGrants(direct, board, at);
  const { board: current, passing, revoked } = await grants.revokeDue(run.board, due);
  run.summary.revocations += revoked;
  run.board = current;
  run.elsewhere = new Set();
  if (passing.length === 0) return;
  const requests = new Map(passing.map((t) => [t, current.targets.get(t)?.req]));
  const served = new Map(passing.map((t) => [t, current.targets.get(t)?.served]));
  const pass = await run.keeper.during(() =>
    run.session.pass({ targets: passing, version: current.version, requests, served }),
  );
  addPass(run.summary, pass);
  const byTarget = new Map(pass.targets.map((t) => [t.target, t]));
  const leasedElsewhere = new Set(pass.targets.filter((t) => t.outcome === 'leased-elsewhere').map((t) => t.target));
  const grantUntil = run.now() + direct.grantMs;
  // A target with no staging queue recorded has nothing to do: served, with no due time.
  // A target that stays busy (refilled at its drain's pace) is left due on the board as it is:
  // the board is written when a target's state changes, not every round (nor every refill).
  const stillDue = (t: string) => byTarget.get(t)?.busy === true && isDue(current.targets.get(t) ?? {}, run.now());
  const written: Served[] = passing
    .filter((t) => !leasedElsewhere.has(t) && !stillDue(t))
    .map((target) => grants.served(target, byTarget.get(target), current.version, grantUntil));
  run.summary.revocations += written.filter((w) => byTarget.get(w.target)?.outcome === 'granted').length;
  // Granted only if no request came in since the board was read (else the target is passed again first).
  const after = written.length > 0 ? await board.writeServed(written, current.version) : await board.read();
  run.summary.grants += grants.kept(written, after);
  run.board = after;
  run.elsewhere = leasedElsewhere;
}

function addPass(summary: ExecutionSummary, pass: PassSummary): void {
  summary.rounds++;
  summary.targetPasses += pass.targets.length;
  summary.summaries.push(pass);
  summary.moved += pass.moved;
  summary.parked += pass.parked;
}

/** Near the time limit with work due: leases back, slot freed, a successor started. */
async function handOff(run: Run): Promise<Ending> {
  const { board, trigger, report } = run.deps;
  await run.session.close();
  const until = trigger ? run.now() + run.deps.graceMs : undefined;
  await board.handOff(run.slot, until);
  run.left = true;
  if (trigger && until !== undefined) {
    try {
      await trigger.start(WORK_EVENT);
    } catch (error) {
      report.boardFailed('start a successor', error);
      await board.clearStarting(until).catch(() => undefined);
    }
  }
  return 'successor';
}

/** One invocation: the schedule's backstop (no event), an earlier pass request, or a work event; then an execution. */
export type RunInvocation = (event: DistributorEvent | undefined, remainingMs: number) => Promise<ExecutionSummary>;

/** The invocations of a container: executions, the scheduled ones after the backstop. */
export function invocationRunner(
  deps: ExecutionDeps &
    Omit<BackstopDeps, 'board' | 'intervalMs' | 'report'> & {
      board: ExecutionDeps['board'] & BackstopDeps['board'];
      report: ExecutionDeps['report'] & BackstopDeps['report'];
    },
): RunInvocation {
  return async (event, remainingMs) => {
    let backstopFailure: { error: unknown } | undefined;
    if (event === undefined) {
      await runBackstop({ ...deps, intervalMs: deps.settings.backstopIntervalMs }).catch((error: unknown) => {
        backstopFailure = { error };
      });
    } else if (event.source === 'fairway.pass-request') {
      // An invoke of the earlier run model: its target goes on the board like a router's request.
      await deps.board.request([event.target]);
    }
    const execution = await runExecution(deps, remainingMs);
    deps.report.executionEnded(execution);
    // The board is served first; then a failed listing fails the invocation, naming what is unreachable
    // (the function's Errors alarm), and the next minute's schedule lists again.
    if (backstopFailure) throw backstopFailure.error;
    return execution;
  };
}
