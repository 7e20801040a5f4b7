import { type ExecutionDeps, MIN_ROUND_MS, runExecution } from '../../../lib/distributor/execution';
import type { PassOver } from '../../../lib/distributor/pass';
import type { PassSummary, TargetSummary } from '../../../lib/distributor/report';
import { LEASE_MS } from '../../../lib/distributor/stores/lease-store';
import { directRoutingDefaults } from '../../../lib/settings/common';
import type { DirectRoutingSettings } from '../../../lib/work-board/grants';
import { type Board, EMPTY_BOARD, type Served } from '../../../lib/work-board/work-board';
import type { LeaveRule } from '../../../lib/work-board/work-board-store';

/**
 * runExecution over an in-memory board with the DynamoDB adapter's conditions
 * (test/integration/work-board/work-board-store.test.ts checks those on dynalite) and passes
 * that only report, on a clock the test moves.
 */
function world(
  options: { remainingMs?: number; maxExecutions?: number; waitBoundMs?: number; direct?: DirectRoutingSettings } = {},
) {
  let clock = 1_000_000;
  const board: Board = { ...EMPTY_BOARD, targets: new Map(), slots: new Map() };
  const copy = (): Board => ({
    ...board,
    targets: new Map([...board.targets].map(([t, e]) => [t, { ...e }])),
    slots: new Map(board.slots),
  });
  /** Runs before each `leave` is evaluated (a router writing at that instant). */
  let beforeLeave: (() => void) | undefined;
  /** What each target's pass reports: its outcome and when it is due next. */
  const outcomes = new Map<string, Partial<TargetSummary>>();
  const passes: PassOver[] = [];
  /** Each board write of a round, in order: what it served, or what it revoked. */
  const writes: ({ served: Served[] } | { revoked: string[]; due: number })[] = [];
  /** Changes each pass's report, by its round (1, 2, …). */
  let script: ((round: number, summary: PassSummary) => void) | undefined;
  const started: unknown[] = [];
  /** Targets whose lease the session took (on first use, as pass.ts does). */
  const leased = new Set<string>();
  /** Things that happen at a time on the clock (a router's request meanwhile), run as it passes them. */
  const events: { at: number; happen: () => void }[] = [];
  const request = (targets: string[]) => {
    board.version++;
    for (const t of targets) board.targets.set(t, { ...board.targets.get(t), req: board.version });
  };
  const deps: ExecutionDeps = {
    board: {
      async claimSlot(max, now, until) {
        for (let slot = 0; slot < max; slot++) {
          if ((board.slots.get(slot) ?? 0) <= now) {
            board.slots.set(slot, until);
            delete board.starting;
            return { slot, board: copy() };
          }
        }
        return undefined;
      },
      async renewSlot(slot, held, now, until) {
        const current = board.slots.get(slot) ?? 0;
        if (current !== held && current > now) return false;
        board.slots.set(slot, until);
        return true;
      },
      read: async () => copy(),
      async writeServed(given: readonly Served[], grantIfVersion?: number) {
        // As the adapter: grants only while no request came in since the round read the board.
        const served: readonly Served[] =
          grantIfVersion !== undefined && board.version !== grantIfVersion
            ? given.map(({ grant: _, grantWait: __, ...rest }) => rest)
            : given;
        writes.push({ served: [...served] });
        for (const s of served) {
          const entry = { ...board.targets.get(s.target), served: s.served };
          if (s.due === undefined) delete entry.due;
          else entry.due = s.due;
          if (s.grant === undefined) {
            delete entry.grant;
            delete entry.grantWait;
          } else Object.assign(entry, { grant: s.grant, grantWait: s.grantWait });
          board.targets.set(s.target, entry);
        }
        return copy();
      },
      async revoke(targets, due) {
        writes.push({ revoked: [...targets], due });
        for (const t of targets) {
          const entry = { ...board.targets.get(t), due };
          delete entry.grant;
          delete entry.grantWait;
          board.targets.set(t, entry);
        }
        return copy();
      },
      async leave(slot: number, rule: LeaveRule, version: number, max: number, now: number) {
        beforeLeave?.();
        beforeLeave = undefined;
        const others = [...board.slots].some(([s, until]) => s !== slot && s < max && until > now);
        if ((rule === 'version-or-others' && board.version === version) || others) {
          board.slots.delete(slot);
          return true;
        }
        return false;
      },
      async handOff(slot, until) {
        board.slots.delete(slot);
        if (until !== undefined) board.starting = until;
      },
      async clearStarting() {},
      async request(targets) {
        request([...targets]);
        return copy();
      },
    },
    distributor: {
      session: () => ({
        deadline: clock + (options.remainingMs ?? 60_000) - 10_000,
        async pass(over) {
          passes.push(over!);
          clock += 100;
          const targets = over!.targets.map(
            (target): TargetSummary => ({
              target,
              outcome: 'distributed',
              created: false,
              planned: 0,
              moved: 1,
              requeued: 0,
              parked: 0,
              queues: [],
              ...outcomes.get(target),
            }),
          );
          const summary = { targets, moved: targets.length } as unknown as PassSummary;
          script?.(passes.length, summary);
          for (const t of summary.targets) if (t.outcome !== 'leased-elsewhere') leased.add(t.target);
          return summary;
        },
        get leases() {
          return leased.size;
        },
        close: async () => leased.clear(),
      }),
    },
    settings: {
      maxExecutions: options.maxExecutions ?? 2,
      waitBoundMs: options.waitBoundMs ?? 6_000,
      boardPollMs: 250,
      backstopIntervalMs: 60_000,
      stagingCacheMs: 60_000,
      safetyMarginMs: 10_000,
    },
    direct: options.direct ?? directRoutingDefaults(),
    trigger: { start: async (event) => void started.push(event) },
    graceMs: 10_000,
    report: { boardFailed: (action, error) => void started.push({ action, error }), executionEnded: () => undefined },
    now: () => clock,
    sleep: async (ms) => {
      clock += ms;
      for (const event of events.filter((e) => e.at <= clock)) {
        events.splice(events.indexOf(event), 1);
        event.happen();
      }
    },
  };
  return {
    deps,
    board: () => board,
    request,
    outcomes,
    passes,
    writes,
    started,
    now: () => clock,
    holdSlot: (slot: number, until: number) => board.slots.set(slot, until),
    /** Moves the clock on without anything happening (time spent inside a pass). */
    advance: (ms: number) => {
      clock += ms;
    },
    script: (change: typeof script) => {
      script = change;
    },
    /** Runs `happen` once the clock passes `inMs` from now. */
    after: (inMs: number, happen: () => void) => void events.push({ at: clock + inMs, happen }),
    onLeave: (hook: () => void) => {
      beforeLeave = hook;
    },
    run: () => runExecution(deps, options.remainingMs ?? 60_000),
  };
}

describe('runExecution: one execution over the work board', () => {
  it('serves the requested targets in one round, least recently served first, and leaves with its slot freed', async () => {
    const w = world();
    w.request(['b']);
    w.board().targets.set('b', { req: 1, served: 0 });
    w.request(['a']);
    const summary = await w.run();
    expect(w.passes.map((p) => p.targets)).toEqual([['a', 'b']]);
    expect(summary).toMatchObject({ slot: 0, rounds: 1, targetPasses: 2, ending: 'idle', waitedMs: 0 });
    expect(w.board().slots.size).toBe(0);
    expect(w.board().targets.get('a')).toEqual({ req: 2, served: 2 });
  });

  it('a request written after its last read, as it leaves, is served before it ends (no request stranded)', async () => {
    const w = world();
    w.request(['a']);
    w.onLeave(() => w.request(['late']));
    const summary = await w.run();
    expect(w.passes.map((p) => p.targets)).toEqual([['a'], ['late']]);
    expect(summary.rounds).toBe(2);
    expect(w.board().slots.size).toBe(0);
  });

  it('waits for a target due within the bound, reading the board meanwhile, and ends when nothing is left', async () => {
    const w = world();
    w.request(['t']);
    // Due again after the first two passes; the third leaves nothing.
    w.script((round, summary) => {
      summary.targets[0]!.dueInMs = round < 3 ? 1_000 : undefined;
    });
    const summary = await w.run();
    expect(summary.rounds).toBe(3);
    // Due 1 s after each pass began; each took 100 ms.
    expect(summary.waitedMs).toBe(1_800);
    expect(summary.ending).toBe('idle');
  });

  it('ends instead of waiting for a target due beyond the bound (the schedule or the next batch reach it)', async () => {
    const w = world({ waitBoundMs: 6_000 });
    w.request(['slow']);
    w.outcomes.set('slow', { dueInMs: 20_000 });
    const summary = await w.run();
    expect(summary).toMatchObject({ rounds: 1, ending: 'idle', waitedMs: 0 });
    expect(w.board().targets.get('slow')?.due).toBeGreaterThan(w.now() + 19_000);
  });

  it('holding many leases it stays for the next request rather than give them back, and leaves once none came for as long as leaving costs', async () => {
    const w = world({ waitBoundMs: 6_000 });
    const targets = Array.from({ length: 20 }, (_, i) => `t${String(i).padStart(2, '0')}`);
    w.request(targets);
    // A router's next batch, 900 ms after the first round ended (no due time: staging was emptied).
    w.after(1_000, () => w.request(['t03']));
    const summary = await w.run();
    expect(w.passes.map((p) => p.targets)).toEqual([targets, ['t03']]);
    // Four polls see the request (at 1.1 s); 20 leases: it stays 160 + 20 × 155 = 3,260 ms after its last round.
    expect(summary).toMatchObject({ rounds: 2, ending: 'idle', waitedMs: 1_000 + 3_260 });
    expect(w.board().slots.size).toBe(0);
  });

  it('with another execution in flight it does not stay: the two become one', async () => {
    const w = world({ waitBoundMs: 6_000 });
    w.holdSlot(1, w.now() + 30_000);
    w.request(Array.from({ length: 20 }, (_, i) => `t${i}`));
    w.after(1_000, () => w.request(['t3']));
    const summary = await w.run();
    expect(summary).toMatchObject({ rounds: 1, ending: 'idle', waitedMs: 0 });
    expect(w.board().slots.get(0)).toBeUndefined();
  });

  it('holding one lease it leaves at once: a new execution costs less than waiting for the next batch', async () => {
    const w = world({ waitBoundMs: 6_000 });
    w.request(['a']);
    w.after(1_000, () => w.request(['a']));
    const summary = await w.run();
    expect(summary).toMatchObject({ rounds: 1, ending: 'idle', waitedMs: 0 });
  });

  it('it does not stay past its last round time: it leaves without a successor when nothing is due', async () => {
    const w = world({ remainingMs: 10_000 + MIN_ROUND_MS + 2_000 });
    w.request(Array.from({ length: 50 }, (_, i) => `t${i}`));
    const summary = await w.run();
    expect(summary).toMatchObject({ rounds: 1, ending: 'idle', waitedMs: 0 });
    expect(w.started).toEqual([]);
  });

  it('near its time limit with work due it frees its slot and starts a successor', async () => {
    const w = world({ remainingMs: 10_000 + MIN_ROUND_MS - 1 });
    w.request(['a']);
    const summary = await w.run();
    expect(summary.ending).toBe('successor');
    expect(w.passes).toEqual([]);
    expect(w.started).toEqual([{ source: 'fairway.work' }]);
    expect(w.board().slots.size).toBe(0);
    expect(w.board().starting).toBe(w.now() + 10_000);
  });

  it('a round that outlasts its slot renews it as it goes: no other execution takes the slot meanwhile', async () => {
    const w = world({ maxExecutions: 1 });
    w.request(['a']);
    const session = w.deps.distributor.session;
    const claimsMeanwhile: boolean[] = [];
    w.deps.distributor = {
      session: (remainingMs) => {
        const s = session(remainingMs);
        const pass = s.pass.bind(s);
        // A round over many busy targets: stints for 2.5 × LEASE_MS. The slot's checks run in real
        // time: each step waits for the slot to be live (a check or two; 20 s allows a loaded
        // machine, and only old code that never renews waits it out), then another claims.
        s.pass = async (over) => {
          for (let i = 0; i < 5; i++) {
            w.advance(LEASE_MS / 2);
            const giveUpAt = Date.now() + 20_000;
            while ((w.board().slots.get(0) ?? 0) <= w.now() && Date.now() < giveUpAt)
              await new Promise((resolve) => setTimeout(resolve, 20));
            const now = w.now();
            claimsMeanwhile.push((await w.deps.board.claimSlot(1, now, now + LEASE_MS)) !== undefined);
          }
          return pass(over);
        };
        return s;
      },
    };
    const summary = await w.run();
    expect(claimsMeanwhile).toEqual([false, false, false, false, false]);
    expect(summary).toMatchObject({ slot: 0, rounds: 1, ending: 'idle' });
    expect(w.board().slots.size).toBe(0);
  });

  it('every slot held: it ends at once', async () => {
    const w = world({ maxExecutions: 2 });
    w.holdSlot(0, w.now() + 5_000);
    w.holdSlot(1, w.now() + 5_000);
    w.request(['a']);
    expect(await w.run()).toMatchObject({ ending: 'no-slot', rounds: 0 });
    expect(w.passes).toEqual([]);
  });

  it('a target another execution holds is left to it: it leaves relying on that execution', async () => {
    const w = world();
    w.holdSlot(1, w.now() + 50_000); // the holder
    w.request(['held']);
    w.outcomes.set('held', { outcome: 'leased-elsewhere' });
    const summary = await w.run();
    expect(summary).toMatchObject({ slot: 0, rounds: 1, ending: 'idle' });
    // Not marked served: the holder's round writes it.
    expect(w.board().targets.get('held')?.served).toBeUndefined();
  });

  it('a target leased by an execution that is gone is taken again once its lease lapses', async () => {
    const w = world();
    w.request(['orphan']);
    w.script((round, summary) => {
      if (round === 1) summary.targets[0]!.outcome = 'leased-elsewhere';
    });
    const summary = await w.run();
    expect(summary.rounds).toBe(2);
    expect(w.board().targets.get('orphan')?.served).toBe(1);
  });
});

describe('runExecution: grants for direct routing (docs/distributor.md "Direct routing under a grant")', () => {
  const direct: DirectRoutingSettings = {
    mode: 'granted',
    maxDepth: 20,
    grantMs: 300_000,
    readMs: 1_000,
    publishMs: 1_000,
  };
  const grantable: Partial<TargetSummary> = { grantsWithheld: false, overflow: 'drop-head', untunedMaxLength: 1_000 };

  it("grants a target its pass left with nothing staged, in the round's one write", async () => {
    const w = world({ direct });
    w.request(['t']);
    w.outcomes.set('t', grantable);
    const summary = await w.run();
    expect(w.writes).toHaveLength(1);
    // The pass took 100 ms; the grant runs from the write.
    // With the wait a revocation of it must keep: this deployment's read + publish windows.
    expect(w.writes[0]).toEqual({ served: [{ target: 't', served: 1, grant: w.now() + 300_000, grantWait: 2_000 }] });
    expect(w.board().targets.get('t')?.grant).toBe(w.now() + 300_000);
    expect(summary).toMatchObject({ grants: 1, revocations: 0 });
  });

  it.each<[string, Partial<TargetSummary>, DirectRoutingSettings]>([
    ['work left staged', { ...grantable, dueInMs: 1_000 }, direct],
    ['a target whose limits may drop a message', { ...grantable, lengthLimit: 100 }, direct],
    ['grants withheld by the pass', { ...grantable, grantsWithheld: true }, direct],
    ['a failed pass', { ...grantable, outcome: 'failed', error: 'boom' }, direct],
    ['below the refill threshold', { ...grantable, outcome: 'below-threshold' }, direct],
    ['a max length not above the max depth', { ...grantable, untunedMaxLength: 20 }, direct],
    ['direct routing off', grantable, { ...direct, mode: 'off' }],
  ])('no grant, and any grant removed: %s', async (_, outcome, settings) => {
    const w = world({ direct: settings });
    w.request(['t']);
    w.board().targets.set('t', { ...w.board().targets.get('t'), grant: w.now() - 1 });
    w.outcomes.set('t', outcome);
    const summary = await w.run();
    const first = w.writes[0] as { served: Served[] };
    expect(first.served[0]).not.toHaveProperty('grant');
    expect(w.board().targets.get('t')?.grant).toBeUndefined();
    expect(summary.grants).toBe(0);
  });

  it("a due target with a live grant is revoked, not passed, and passed once the routers' windows are over", async () => {
    const w = world({ direct });
    const start = w.now();
    w.request(['t', 'u']);
    w.board().targets.set('t', { ...w.board().targets.get('t'), grant: start + 100_000 });
    const summary = await w.run();
    // Round 1: t revoked (due after read + publish windows), u passed; then t alone, after the wait.
    expect(w.writes[0]).toEqual({ revoked: ['t'], due: start + 2_000 });
    expect(w.passes.map((p) => p.targets)).toEqual([['u'], ['t']]);
    expect(w.passes).toHaveLength(2);
    expect(summary).toMatchObject({ revocations: 1, ending: 'idle' });
    expect(summary.waitedMs).toBeGreaterThanOrEqual(2_000 - 100);
    expect(w.board().targets.get('t')?.grant).toBeUndefined();
  });

  it('a grant written with a longer revocation wait than this execution has (windows changed since) is waited out in full', async () => {
    const w = world({ direct });
    const start = w.now();
    w.request(['t']);
    w.board().targets.set('t', { ...w.board().targets.get('t'), grant: start + 100_000, grantWait: 5_000 });
    const summary = await w.run();
    expect(w.writes[0]).toEqual({ revoked: ['t'], due: start + 5_000 });
    expect(summary.waitedMs).toBeGreaterThanOrEqual(5_000 - 100);
    expect(w.board().targets.get('t')).not.toHaveProperty('grantWait');
  });

  it('a lapsed grant needs no revocation: the target is passed at once', async () => {
    const w = world({ direct });
    w.request(['t']);
    w.board().targets.set('t', { ...w.board().targets.get('t'), grant: w.now() });
    const summary = await w.run();
    expect(w.passes.map((p) => p.targets)).toEqual([['t']]);
    expect(summary.revocations).toBe(0);
  });

  it('with direct routing off a grant left from before is still revoked', async () => {
    const w = world();
    const start = w.now();
    w.request(['t']);
    w.board().targets.set('t', { ...w.board().targets.get('t'), grant: start + 100_000 });
    await w.run();
    expect(w.writes[0]).toEqual({ revoked: ['t'], due: start + 2_000 });
  });

  it("a target another execution granted since the board was read (seen once its lease is taken) is revoked in the round's write", async () => {
    const w = world({ direct });
    const start = w.now();
    w.request(['t']);
    w.script((round, summary) => {
      if (round === 1) summary.targets[0]!.outcome = 'granted';
    });
    const summary = await w.run();
    expect(w.writes[0]).toEqual({ served: [{ target: 't', served: 1, due: start + 2_000 }] });
    // Passed in a second round, after the wait.
    expect(summary).toMatchObject({ revocations: 1, rounds: 2 });
    expect(summary.waitedMs).toBeGreaterThanOrEqual(2_000 - 100);
  });

  it('a request written during the pass withholds the grant: the target is passed again next round, with no revocation', async () => {
    const w = world({ direct });
    w.request(['t']);
    w.outcomes.set('t', grantable);
    w.script((round) => {
      if (round === 1) w.request(['t']);
    });
    const summary = await w.run();
    expect(w.writes[0]).toEqual({ served: [{ target: 't', served: 1 }] });
    expect(w.passes.map((p) => p.targets)).toEqual([['t'], ['t']]);
    expect(summary).toMatchObject({ grants: 1, revocations: 0, waitedMs: 0 });
    expect(w.board().targets.get('t')?.grant).toBeGreaterThan(w.now());
  });
});
