import {
  dueTargets,
  isDue,
  liveGrant,
  liveSlots,
  needsStart,
  nextDueAt,
  parseBoard,
  WORK_BOARD_KEY,
} from '../../../lib/work-board/work-board';

describe('the work board (pure rules)', () => {
  const board = parseBoard({
    pk: WORK_BOARD_KEY,
    version: 12,
    'req:a': 12,
    'served:a': 10,
    'req:b': 9,
    'served:b': 11,
    'due:b': 5_000,
    'req:c': 3,
    'req:d': 8,
    'served:d': 8,
    'due:d': 20_000,
    'exec:0': 60_000,
    'exec:1': 1_000,
    starting: 2_000,
    listedAt: 500,
    'req:bad': 'not a number',
  });

  it('reads every attribute by its prefix; a value that is not a number is ignored', () => {
    expect(board.version).toBe(12);
    expect(Object.fromEntries(board.targets)).toEqual({
      a: { req: 12, served: 10 },
      b: { req: 9, served: 11, due: 5_000 },
      c: { req: 3 },
      d: { req: 8, served: 8, due: 20_000 },
    });
    expect([...board.slots]).toEqual([
      [0, 60_000],
      [1, 1_000],
    ]);
    expect(board.starting).toBe(2_000);
    expect(board.listedAt).toBe(500);
  });

  it.each<[string, Parameters<typeof isDue>[0], number, boolean]>([
    ['a request newer than the last pass', { req: 5, served: 4 }, 0, true],
    ['a request the last pass saw', { req: 4, served: 4 }, 0, false],
    ['never served', { req: 1 }, 0, true],
    ['due time reached', { req: 1, served: 1, due: 100 }, 100, true],
    [
      'due time ahead, whatever the requests: the due pass reads every queue',
      { req: 9, served: 1, due: 200 },
      100,
      false,
    ],
    ['nothing asked', {}, 0, false],
  ])('due: %s', (_name, entry, now, expected) => {
    expect(isDue(entry, now)).toBe(expected);
  });

  it('orders due targets least recently served first, never served first, and leaves out the skipped', () => {
    expect(dueTargets(board, 6_000)).toEqual(['c', 'a', 'b']);
    expect(dueTargets(board, 6_000, new Set(['c']))).toEqual(['a', 'b']);
    expect(dueTargets(board, 4_000)).toEqual(['c', 'a']);
  });

  it('the next due time ahead, and the slots still held', () => {
    expect(nextDueAt(board, 4_000)).toBe(5_000);
    expect(nextDueAt(board, 6_000)).toBe(20_000);
    expect(nextDueAt(board, 6_000, new Set(['d']))).toBeUndefined();
    expect(liveSlots(board, 1_000)).toEqual([0]);
    expect(liveSlots(board, 60_000)).toEqual([]);
  });

  it('a router starts an execution only when no slot is held and none is starting', () => {
    expect(needsStart(board, 1_500)).toBe(false); // slot 0 held
    expect(needsStart(board, 60_000)).toBe(true); // every slot lapsed, the start too
    expect(needsStart({ ...board, slots: new Map() }, 1_500)).toBe(false); // one is starting
  });
});

describe('grants on the work board (direct routing)', () => {
  const board = parseBoard({
    pk: WORK_BOARD_KEY,
    version: 3,
    'req:a': 3,
    'served:a': 3,
    'grant:a': 50_000,
    'grant:b': 1_000,
    'grant:bad': 'soon',
  });

  it('reads `grant:<target>` beside the other target attributes; a value that is not a number is ignored', () => {
    expect(Object.fromEntries(board.targets)).toEqual({ a: { req: 3, served: 3, grant: 50_000 }, b: { grant: 1_000 } });
  });

  it.each([
    ['a', 49_999, 50_000],
    ['a', 50_000, undefined],
    ['b', 2_000, undefined],
    ['none', 0, undefined],
  ])('the live grant of %s at %d is %s', (target, now, live) => {
    expect(liveGrant(board, target, now)).toBe(live);
  });

  it('a grant alone does not make a target due', () => {
    expect(dueTargets(board, 0)).toEqual([]);
  });
});
