import { controlledWeight, someQueueMayWeighZero } from '../../../lib/distributor/planning/weights';
import { DirectGrants, GRANT_REUSE_FRACTION, UNGRANTED_RECHECK_MS } from '../../../lib/routing/direct-grants';
import { directChoice, type GrantRead, grantedTargets } from '../../../lib/routing/direct-routes';
import { directRoutingDefaults } from '../../../lib/settings/common';
import { directPublishesFit, grantUsable, mayGrant, readFresh } from '../../../lib/work-board/grants';

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

  // 10 routers × depth 20 = 200 messages at most in a granted target (docs/router.md "Direct routing").
  const bound = { maxDepth: 20, routers: 10 };
  it.each<[string, Parameters<typeof directPublishesFit>[0], Parameters<typeof directPublishesFit>[1], boolean]>([
    ['no limits', { overflow: 'drop-head' }, bound, true],
    ['no limits, routers unknown', { overflow: 'drop-head' }, { maxDepth: 20 }, true],
    ['max-length 1000, drop-head, 10 routers', { maxLength: 1_000, overflow: 'drop-head' }, bound, true],
    ['max-length 200, drop-head: exactly the bound', { maxLength: 200, overflow: 'drop-head' }, bound, true],
    ['max-length 199, drop-head: one short of the bound', { maxLength: 199, overflow: 'drop-head' }, bound, false],
    [
      'max-length 1000, drop-head, routers unknown',
      { maxLength: 1_000, overflow: 'drop-head' },
      { maxDepth: 20 },
      false,
    ],
    [
      'max-length 1000, reject-publish-dlx, 10 routers',
      { maxLength: 1_000, overflow: 'reject-publish-dlx' },
      bound,
      true,
    ],
    ['max-length 100, reject-publish-dlx', { maxLength: 100, overflow: 'reject-publish-dlx' }, bound, false],
    ['max-length 100, reject-publish (refused, retried)', { maxLength: 100, overflow: 'reject-publish' }, bound, true],
    ['max-length-bytes, drop-head', { maxLengthBytes: 1e9, overflow: 'drop-head' }, bound, false],
    ['both limits, drop-head', { maxLength: 1_000, maxLengthBytes: 1e9, overflow: 'drop-head' }, bound, false],
    ['max-length-bytes, reject-publish', { maxLengthBytes: 100, overflow: 'reject-publish' }, bound, true],
  ])('directPublishesFit: %s → %s', (_, limits, settings, fits) => {
    expect(directPublishesFit(limits, settings)).toBe(fits);
  });

  const granted = { ...directRoutingDefaults(), mode: 'granted' as const, routers: 10 };
  const clean = {
    outcome: 'distributed',
    grantsWithheld: false,
    overflow: 'drop-head' as const,
    untunedMaxLength: 1_000,
  };
  it.each<[string, Parameters<typeof mayGrant>[0], boolean]>([
    ['a clean pass', clean, true],
    ['work left', { ...clean, dueInMs: 1_000 }, false],
    ['failed', { ...clean, outcome: 'failed', error: 'x' }, false],
    ['below threshold', { ...clean, outcome: 'below-threshold' }, false],
    ['grants withheld', { ...clean, grantsWithheld: true }, false],
    ['withheld unknown', { outcome: 'distributed', overflow: 'drop-head', untunedMaxLength: 1_000 }, false],
    ['limits unknown', { outcome: 'distributed', grantsWithheld: false, untunedMaxLength: 1_000 }, false],
    ['a drop-head max length 1000 (10 routers × 20 fit)', { ...clean, lengthLimit: 1_000 }, true],
    [
      'a drop-head max length 100 (10 routers × 20 do not fit)',
      { ...clean, lengthLimit: 100, untunedMaxLength: 100 },
      false,
    ],
    ['a drop-head byte limit', { ...clean, maxLengthBytes: 1e6 }, false],
    ['max length equal to the max depth', { ...clean, untunedMaxLength: 20 }, false],
    ['max length unknown', { ...clean, untunedMaxLength: undefined }, false],
    ['max length just above the max depth', { ...clean, untunedMaxLength: 21 }, true],
  ])('mayGrant: %s → %s', (_, pass, grants) => {
    expect(mayGrant(pass, granted)).toBe(grants);
    expect(mayGrant(pass, { ...granted, mode: 'off' })).toBe(false);
  });

  it('a drop-head max length with the routers unknown: no grant (fails closed)', () => {
    const { routers: _, ...unknown } = granted;
    expect(mayGrant({ ...clean, lengthLimit: 1_000 }, unknown)).toBe(false);
    expect(mayGrant(clean, unknown)).toBe(true);
  });

  it('a tenant paused before it has a staging queue on the target: every queue the pass sees weighs > 0, yet no grant', () => {
    const controls = { late: { paused: true } };
    const staging = ['scan»/early/w']; // `late` has no staging queue on scan yet
    expect(staging.every((name) => controlledWeight(() => 1, controls)(name) > 0)).toBe(true);
    const pass = { ...clean, grantsWithheld: someQueueMayWeighZero([], controls) };
    expect(pass.grantsWithheld).toBe(true);
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
