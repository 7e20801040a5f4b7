import { controlledWeight, someQueueMayWeighZero } from '../../../lib/distributor/planning/weights';
import { DirectGrants, GRANT_REUSE_FRACTION, UNGRANTED_RECHECK_MS } from '../../../lib/routing/direct-grants';
import { directChoice, type GrantRead, grantedTargets } from '../../../lib/routing/direct-routes';
import { directRoutingDefaults } from '../../../lib/settings/common';
import { grantable, grantUsable, limitsKeepEveryMessage, mayGrant, readFresh } from '../../../lib/work-board/grants';

const windows = { readMs: 1_000, publishMs: 1_000 };
const NOW = 100_000;

describe('grantedTargets: a router publishes direct only on a fresh read of a grant that outlasts its windows', () => {
  const read = (until: number | undefined, readAt = NOW): GrantRead => ({ until, readAt });
  it.each<[string, GrantRead | undefined, boolean]>([
    ['no read', undefined, false],
    ['no grant', read(undefined), false],
    ['lapsed', read(NOW - 1), false],
    ['live, but ends before a late publish would be confirmed', read(NOW + 1_999), false],
    ['live past both windows', read(NOW + 2_000), true],
    ['live, read just within the read window', read(NOW + 60_000, NOW - 1_000), true],
    ['live, read longer ago than the read window', read(NOW + 60_000, NOW - 1_001), false],
    ['a read from the future (clock moved back)', read(NOW + 60_000, NOW + 5), false],
  ])('%s → %s', (_, grant, usable) => {
    const grants = new Map(grant ? [['t', grant]] : []);
    expect(grantedTargets(['t'], grants, NOW, windows)).toEqual(usable ? ['t'] : []);
  });

  it('keeps the order of several targets and drops the ungranted', () => {
    const grants = new Map([
      ['a', read(NOW + 10_000)],
      ['b', read(undefined)],
      ['c', read(NOW + 10_000)],
    ]);
    expect(grantedTargets(['c', 'b', 'a'], grants, NOW, windows)).toEqual(['c', 'a']);
  });
});

describe("directChoice: the first max(0, max depth − depth) of a granted target's messages, in batch order", () => {
  it.each<[string, string[], [string, number | undefined][], number, boolean[]]>([
    ['depth below max: all fit', ['t', 't'], [['t', 0]], 20, [true, true]],
    ['depth below max: some fit', ['t', 't', 't'], [['t', 18]], 20, [true, true, false]],
    ['depth at max', ['t'], [['t', 20]], 20, [false]],
    ['depth above max', ['t', 't'], [['t', 25]], 20, [false, false]],
    ['a missing target (no depth)', ['t'], [['t', undefined]], 20, [false]],
    ['a target not granted (no depth read)', ['u', 't'], [['t', 0]], 20, [false, true]],
    [
      'several targets, interleaved',
      ['a', 'b', 'a', 'b', 'a'],
      [
        ['a', 1],
        ['b', 2],
      ],
      3,
      [true, true, true, false, false],
    ],
    ['max depth 1, empty target', ['t', 't'], [['t', 0]], 1, [true, false]],
  ])('%s', (_, targets, depths, maxDepth, expected) => {
    expect(directChoice(targets, new Map(depths), maxDepth)).toEqual(expected);
  });
});

describe('the grant rules (lib/work-board/grants.ts)', () => {
  it.each([
    [0, 0, true],
    [0, 1_000, true],
    [0, 1_001, false],
    [1_000, 999, false],
  ])('readFresh(read at %d, now %d) = %s', (readAt, now, fresh) => {
    expect(readFresh(readAt, now, windows)).toBe(fresh);
  });

  it('grantUsable needs a grant', () => {
    expect(grantUsable({ until: undefined, readAt: NOW }, NOW, windows)).toBe(false);
  });

  it.each<[string, Parameters<typeof limitsKeepEveryMessage>[0], boolean]>([
    ['no limits', { overflow: 'drop-head' }, true],
    ['max-length, drop-head', { maxLength: 100, overflow: 'drop-head' }, false],
    ['max-length-bytes, drop-head', { maxLengthBytes: 100, overflow: 'drop-head' }, false],
    ['max-length, reject-publish', { maxLength: 100, overflow: 'reject-publish' }, true],
    [
      'max-length, reject-publish-dlx (dead-letters the refused)',
      { maxLength: 100, overflow: 'reject-publish-dlx' },
      false,
    ],
  ])('limitsKeepEveryMessage: %s → %s', (_, limits, keeps) => {
    expect(limitsKeepEveryMessage(limits)).toBe(keeps);
  });

  const granted = { ...directRoutingDefaults(), mode: 'granted' as const };
  const clean = { outcome: 'distributed', grantable: true, maxLength: 1_000 };
  it.each<[string, Parameters<typeof mayGrant>[0], boolean]>([
    ['a clean pass', clean, true],
    ['work left', { ...clean, dueInMs: 1_000 }, false],
    ['failed', { ...clean, outcome: 'failed', error: 'x' }, false],
    ['below threshold', { ...clean, outcome: 'below-threshold' }, false],
    ['not grantable', { ...clean, grantable: false }, false],
    ['grantable unknown', { outcome: 'distributed', maxLength: 1_000 }, false],
    ['max length equal to the max depth', { ...clean, maxLength: 20 }, false],
    ['max length just above the max depth', { ...clean, maxLength: 21 }, true],
  ])('mayGrant: %s → %s', (_, pass, grants) => {
    expect(mayGrant(pass, granted)).toBe(grants);
    expect(mayGrant(pass, directRoutingDefaults())).toBe(false);
  });

  it.each<[string, Parameters<typeof grantable>[0], boolean, boolean]>([
    ['limits that keep every message, no queue may weigh 0', { overflow: 'drop-head' }, false, true],
    ['limits that keep every message, some queue may weigh 0', { overflow: 'drop-head' }, true, false],
    ['limits that may drop a message', { maxLength: 100, overflow: 'drop-head' }, false, false],
  ])('grantable: %s → %s', (_, limits, mayWeighZero, expected) => {
    expect(grantable(limits, mayWeighZero)).toBe(expected);
  });

  it('a tenant paused before it has a staging queue on the target: every queue the pass sees weighs > 0, yet no grant', () => {
    const controls = { late: { paused: true } };
    const staging = ['scan»/early/w']; // `late` has no staging queue on scan yet
    expect(staging.every((name) => controlledWeight(() => 1, controls)(name) > 0)).toBe(true);
    const pass = {
      outcome: 'distributed',
      maxLength: 1_000,
      grantable: grantable({ overflow: 'drop-head' }, someQueueMayWeighZero([], controls)),
    };
    expect(pass.grantable).toBe(false);
    expect(mayGrant(pass, granted)).toBe(false);
  });
});

describe('DirectGrants: grants cached per target for the read window, depths read for granted targets only', () => {
  function world(grants: Record<string, number>, depths: Record<string, number>) {
    let clock = NOW;
    const reads: string[][] = [];
    const depthReads: string[][] = [];
    const direct = new DirectGrants({
      settings: { ...directRoutingDefaults(), mode: 'granted', maxDepth: 3 },
      grants: async (targets) => {
        reads.push([...targets]);
        clock += 5; // the read's round trip: its send time counts
        return new Map(targets.flatMap((t) => (grants[t] === undefined ? [] : [[t, grants[t]!] as const])));
      },
      depths: async (targets) => {
        depthReads.push([...targets]);
        return new Map(targets.map((t) => [t, depths[t]]));
      },
      now: () => clock,
    });
    return { direct, reads, depthReads, advance: (ms: number) => (clock += ms) };
  }

  it("one read for the batch's targets, a grant kept for half the read window; read times are the send time", async () => {
    const w = world({ a: NOW + 60_000 }, { a: 1 });
    expect(await w.direct.choose(['a', 'b', 'a', 'a'])).toEqual([NOW, undefined, NOW, undefined]);
    expect(w.reads).toEqual([['a', 'b']]);
    expect(w.depthReads).toEqual([['a']]);
    // a's grant is kept for half the read window; b, without one, is read again sooner.
    w.advance(400);
    await w.direct.choose(['a', 'b']);
    expect(w.reads).toEqual([['a', 'b'], ['b']]);
    w.advance(100);
    await w.direct.choose(['a', 'b']);
    expect(w.reads).toEqual([['a', 'b'], ['b'], ['a', 'b']]);
  });

  it('a grant read past half the read window is read again before a decision: the publish keeps its headroom', async () => {
    const w = world({ a: NOW + 60_000 }, { a: 0 });
    await w.direct.choose(['a']);
    const readMs = directRoutingDefaults().readMs;
    w.advance(readMs * GRANT_REUSE_FRACTION + 100);
    const [readAt] = await w.direct.choose(['a']);
    expect(w.reads).toHaveLength(2);
    // A publish up to half the window after this decision still finds its read fresh.
    expect(w.advance(0) + readMs * (1 - GRANT_REUSE_FRACTION) - readAt!).toBeLessThanOrEqual(readMs);
  });

  it('no usable grant found: read again after UNGRANTED_RECHECK_MS, not after the read window', async () => {
    const w = world({}, {});
    await w.direct.choose(['a']);
    w.advance(UNGRANTED_RECHECK_MS - 10);
    await w.direct.choose(['a']);
    expect(w.reads).toHaveLength(1);
    w.advance(10);
    await w.direct.choose(['a']);
    expect(w.reads).toHaveLength(2);
  });

  it('no granted target: no depth read, everything staged', async () => {
    const w = world({}, {});
    expect(await w.direct.choose(['a'])).toEqual([undefined]);
    expect(w.depthReads).toEqual([]);
  });
});
