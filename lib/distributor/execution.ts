import { type DirectRoutingSettings, mayGrant, revocationWaitMs } from '../work-board/grants';
import { type DistributorEvent, type PassTrigger, WORK_EVENT } from '../work-board/pass-trigger';
import {
  type Board,
  dueTargets,
  isDue,
  liveGrant,
  liveSlots,
  nextDueAt,
  revokedDueAt,
  type Served,
} from '../work-board/work-board';
import type { DynamoWorkBoard } from '../work-board/work-board-store';
import { type BackstopDeps, runBackstop } from './backstop';
import type { Distributor } from './pass';
import { lingerMs } from './planning/linger';
import type { DistributorReport, ExecutionSummary } from './report';
import type { RunModelSettings } from './settings';
import { LEASE_MS, LEASE_RENEW_MS } from './stores/lease-store';

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

/**
 * One distributor execution (docs/distributor.md "Run model"): claims a slot (none free: ends at
 * once), then serves every due target of the work board, least recently served first, round after
 * round, until nothing is due within the wait bound (nor a request within what leaving would cost
 * its leases, planning/linger.ts) or its time runs out; it leaves only when no request can be
 * stranded. Leases are held for the execution's life.
 */
export async function runExecution(deps: ExecutionDeps, remainingMs: number): Promise<ExecutionSummary> {
  const { board, settings, report } = deps;
  const { direct } = deps;
  const now = deps.now ?? Date.now;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const startedAt = now();
  const summary: ExecutionSummary = {
    rounds: 0,
    targetPasses: 0,
    moved: 0,
    parked: 0,
    summaries: [],
    durationMs: 0,
    ending: 'idle',
    waitedMs: 0,
    grants: 0,
    revocations: 0,
  };
  const ended = (ending: ExecutionSummary['ending']) => {
    summary.ending = ending;
    summary.durationMs = now() - startedAt;
    return summary;
  };

  // The slot lapses soon after a killed execution stops renewing it: routers then start another.
  let slotUntil = Math.min(startedAt + LEASE_MS, startedAt + remainingMs);
  const claim = await board.claimSlot(settings.maxExecutions, startedAt, slotUntil);
  if (!claim) return ended('no-slot');
  const { slot } = claim;
  /** Renews the slot when near its end; false when another execution took it meanwhile. */
  const keepSlot = async () => {
    const at = now();
    if (slotUntil - at > LEASE_RENEW_MS) return true;
    const until = Math.min(at + LEASE_MS, startedAt + remainingMs);
    if (!(await board.renewSlot(slot, slotUntil, at, until))) return false;
    slotUntil = until;
    return true;
  };
  summary.slot = slot;
  const session = deps.distributor.session(remainingMs);
  let state: Board = claim.board;
  let left = false;
  /** Targets another execution held the lease of in the last round: theirs to serve. */
  let elsewhere = new Set<string>();
  let retryMs = FIRST_RETRY_MS;
  /** When it last had a target due: a stay for the next request counts from there. */
  let busyAt = startedAt;
  /** Sleeps a poll (at most `untilMs`) and reads the board. */
  const poll = async (untilMs: number) => {
    const waitMs = Math.min(untilMs, settings.boardPollMs);
    await sleep(waitMs);
    summary.waitedMs += waitMs;
    return board.read();
  };
  try {
    for (;;) {
      if (!(await keepSlot())) {
        left = true; // the slot is another execution's now: not ours to free
        return ended('board-failed');
      }
      const at = now();
      const due = dueTargets(state, at, elsewhere);
      if (due.length > 0) {
        if (session.deadline - at < MIN_ROUND_MS) return ended(await handOff());
        [state, elsewhere] = await round(due, state);
        busyAt = now();
        continue;
      }
      const next = nextDueAt(state, at, elsewhere);
      if (next !== undefined && next - at <= settings.waitBoundMs) {
        if (next > session.deadline - MIN_ROUND_MS) return ended(await handOff());
        state = await poll(next - at);
        continue;
      }
      // Leaving gives back every lease a new execution takes again: with many held, staying a
      // while for the next request costs less (it is served within a poll, as a due target is).
      // Alone only: with another in flight, leaving lets the two become one (its leases are
      // taken once by the other) instead of two staying, each trying the other's leases.
      const stayUntil = busyAt + lingerMs(session.leases, settings.waitBoundMs);
      const alone = liveSlots(state, at).every((s) => s === slot);
      if (alone && at < stayUntil && stayUntil <= session.deadline - MIN_ROUND_MS) {
        state = await poll(stayUntil - at);
        continue;
      }
      // Leases are given back once the slot is free (finally): a leave that fails, as it does
      // under steady traffic, keeps them for the next round. An execution started meanwhile that
      // finds one still held waits a poll and takes it.
      const rule = elsewhere.size > 0 ? 'others-only' : 'version-or-others';
      if (await board.leave(slot, rule, state.version, settings.maxExecutions, now())) {
        left = true;
        return ended('idle');
      }
      // A request came in since the last read (or the holder of a target left): serve it. A
      // holder that just left is giving its leases back within milliseconds; one that was killed
      // holds them until they lapse: retry soon, then less often.
      if (elsewhere.size > 0) {
        await sleep(retryMs);
        retryMs = Math.min(2 * retryMs, settings.boardPollMs);
      } else retryMs = FIRST_RETRY_MS;
      elsewhere = new Set();
      state = await board.read();
    }
  } catch (error) {
    report.boardFailed('serve the work board', error);
    return ended('board-failed');
  } finally {
    await session.close();
    // A slot left held would keep routers from starting an execution until it lapses.
    if (!left) await board.handOff(slot).catch((error: unknown) => report.boardFailed('free its slot', error));
  }

  /**
   * One pass over the due targets; writes what it served; answers the board then and the targets
   * leased elsewhere. A due target that routers may be publishing to under a grant is not passed:
   * its grant is revoked first and it is due again once no router can still be publishing on it.
   */
  async function round(due: readonly string[], seen: Board): Promise<[Board, Set<string>]> {
    const at = now();
    const waitMs = revocationWaitMs(direct);
    const granted = due.filter((t) => liveGrant(seen, t, at) !== undefined);
    let current = seen;
    if (granted.length > 0) {
      current = await board.revoke(granted, revokedDueAt(seen, granted, at, waitMs));
      summary.revocations += granted.length;
    }
    const passing = due.filter((t) => !granted.includes(t));
    if (passing.length === 0) return [current, new Set()];
    const requests = new Map(passing.map((t) => [t, current.targets.get(t)?.req]));
    const served = new Map(passing.map((t) => [t, current.targets.get(t)?.served]));
    const pass = await session.pass({ targets: passing, version: current.version, requests, served });
    summary.rounds++;
    summary.targetPasses += pass.targets.length;
    summary.summaries.push(pass);
    summary.moved += pass.moved;
    summary.parked += pass.parked;
    const byTarget = new Map(pass.targets.map((t) => [t.target, t]));
    const leasedElsewhere = new Set(pass.targets.filter((t) => t.outcome === 'leased-elsewhere').map((t) => t.target));
    const grantUntil = now() + direct.grantMs;
    // A target with no staging queue recorded has nothing to do: served, with no due time. One
    // granted by another execution since the board was read (seen once its lease was taken) is
    // revoked here, in the same write, with this execution's wait (the two run one deployment's windows).
    // A target that stays busy (refilled at its drain's pace) is left due on the board as it is:
    // the board is written when a target's state changes, not every round (nor every refill).
    const stillDue = (t: string) => byTarget.get(t)?.busy === true && isDue(current.targets.get(t) ?? {}, now());
    const written: Served[] = passing
      .filter((t) => !leasedElsewhere.has(t) && !stillDue(t))
      .map((target) => {
        const passed = byTarget.get(target);
        if (passed?.outcome === 'granted') {
          summary.revocations++;
          return { target, served: current.version, due: at + waitMs };
        }
        const dueInMs = passed?.dueInMs;
        const grant = passed !== undefined && mayGrant(passed, direct) ? { grant: grantUntil, grantWait: waitMs } : {};
        return { target, served: current.version, ...(dueInMs === undefined ? {} : { due: at + dueInMs }), ...grant };
      });
    // Granted only if no request came in since the board was read (else the target is passed again first).
    const after = written.length > 0 ? await board.writeServed(written, current.version) : await board.read();
    summary.grants += written.filter(
      (w) => w.grant !== undefined && after.targets.get(w.target)?.grant === w.grant,
    ).length;
    return [after, leasedElsewhere];
  }

  /** Near the time limit with work due: leases back, slot freed, a successor started. */
  async function handOff(): Promise<ExecutionSummary['ending']> {
    await session.close();
    const until = deps.trigger ? now() + deps.graceMs : undefined;
    await board.handOff(slot, until);
    left = true;
    if (deps.trigger && until !== undefined) {
      try {
        await deps.trigger.start(WORK_EVENT);
      } catch (error) {
        report.boardFailed('start a successor', error);
        await board.clearStarting(until).catch(() => undefined);
      }
    }
    return 'successor';
  }
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
