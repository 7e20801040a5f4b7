import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { WORK_BOARD_KEY } from '../../../lib/work-board/work-board';
import { DynamoWorkBoard } from '../../../lib/work-board/work-board-store';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';

const TABLE = 'DistributorStateTable';

describe('DynamoWorkBoard (dynalite)', () => {
  let dynamo: EmbeddedDynamo;
  beforeEach(async () => {
    dynamo = await startDynamo();
    await dynamo.createTables();
  });
  afterEach(() => dynamo?.stop());
  const item = async () =>
    (await dynamo.doc.send(new GetCommand({ TableName: TABLE, Key: { pk: WORK_BOARD_KEY } }))).Item;

  it("a router's batch is one update: every target gets the version it made", async () => {
    const board = new DynamoWorkBoard(dynamo.doc, TABLE);
    const first = await board.request(['a', 'b']);
    expect(first.version).toBe(1);
    expect(first.targets.get('a')).toEqual({ req: 1 });
    const second = await board.request(['b', 'c']);
    expect(second.version).toBe(2);
    expect(Object.fromEntries([...second.targets].map(([t, e]) => [t, e.req]))).toEqual({ a: 1, b: 2, c: 2 });
    expect(await item()).toEqual({ pk: WORK_BOARD_KEY, version: 2, 'req:a': 1, 'req:b': 2, 'req:c': 2 });
  });

  it('past 40 targets a request is split, each part its own version', async () => {
    const board = new DynamoWorkBoard(dynamo.doc, TABLE);
    const targets = Array.from({ length: 90 }, (_, i) => `target-${i}`);
    const after = await board.request(targets);
    expect(after.version).toBe(3);
    expect(after.targets.size).toBe(90);
    expect(after.targets.get('target-89')?.req).toBe(3);
  });

  it('one start while no slot is held; a claimed slot clears it; slots are bounded', async () => {
    const board = new DynamoWorkBoard(dynamo.doc, TABLE);
    await board.request(['a']);
    expect(await board.markStarting(1_000, 11_000)).toBe(true);
    expect(await board.markStarting(1_000, 11_000)).toBe(false); // one is starting
    const first = await board.claimSlot(2, 1_500, 60_000);
    expect(first?.slot).toBe(0);
    expect(first?.board.starting).toBeUndefined();
    // A router that read the board before the slot was claimed cannot start another.
    expect(await board.markStarting(1_600, 11_600)).toBe(false);
    expect((await board.claimSlot(2, 1_500, 60_000))?.slot).toBe(1);
    expect(await board.claimSlot(2, 1_500, 60_000)).toBeUndefined();
    // A killed execution's slot lapses at its invocation's end.
    expect((await board.claimSlot(2, 60_001, 120_000))?.slot).toBe(0);
  });

  it('leaving: refused after a request the holder has not read, unless another slot is held', async () => {
    const board = new DynamoWorkBoard(dynamo.doc, TABLE);
    const claimed = (await board.claimSlot(2, 1_000, 60_000))!;
    await board.request(['a']); // a router wrote after the execution's read
    expect(await board.leave(claimed.slot, 'version-or-others', claimed.board.version, 2, 2_000)).toBe(false);
    const reread = await board.read();
    expect(await board.leave(claimed.slot, 'version-or-others', reread.version, 2, 2_000)).toBe(true);
    expect((await board.read()).slots.size).toBe(0);

    const a = (await board.claimSlot(2, 3_000, 60_000))!;
    const b = (await board.claimSlot(2, 3_000, 60_000))!;
    await board.request(['a']);
    // b may rely on a, which reads the board again before it leaves; a then has no one to rely on.
    expect(await board.leave(b.slot, 'others-only', 0, 2, 4_000)).toBe(true);
    expect(await board.leave(a.slot, 'version-or-others', a.board.version, 2, 4_000)).toBe(false);
    expect(await board.leave(a.slot, 'others-only', 0, 2, 4_000)).toBe(false);
  });

  it("a round's served and due in one write; a target left with nothing loses its due time", async () => {
    const board = new DynamoWorkBoard(dynamo.doc, TABLE);
    await board.request(['a', 'b']);
    await board.writeServed([
      { target: 'a', served: 1, due: 5_000 },
      { target: 'b', served: 1 },
    ]);
    expect((await board.read()).targets.get('a')).toEqual({ req: 1, served: 1, due: 5_000 });
    await board.writeServed([{ target: 'a', served: 1 }]);
    expect((await board.read()).targets.get('a')).toEqual({ req: 1, served: 1 });
  });

  it('the backstop listing is taken at most once per interval', async () => {
    const board = new DynamoWorkBoard(dynamo.doc, TABLE);
    expect(await board.takeListing(100_000, 60_000)).toBe(true);
    expect(await board.takeListing(130_000, 60_000)).toBe(false);
    expect(await board.takeListing(160_000, 60_000)).toBe(true);
  });

  it('a hand-off frees the slot and marks its successor as starting', async () => {
    const board = new DynamoWorkBoard(dynamo.doc, TABLE);
    const claimed = (await board.claimSlot(1, 1_000, 60_000))!;
    await board.handOff(claimed.slot, 12_000);
    const after = await board.read();
    expect(after.slots.size).toBe(0);
    expect(after.starting).toBe(12_000);
    await board.clearStarting(12_000);
    expect((await board.read()).starting).toBeUndefined();
  });

  it('grants: written and removed with served, revoked with a due time, read by projection alone', async () => {
    const board = new DynamoWorkBoard(dynamo.doc, TABLE);
    await board.request(['a', 'b']);
    await board.writeServed([
      { target: 'a', served: 1, grant: 90_000, grantWait: 2_000 },
      { target: 'b', served: 1, due: 5_000 },
    ]);
    expect(await item()).toMatchObject({ 'grant:a': 90_000, 'grantWait:a': 2_000, 'due:b': 5_000 });
    expect(await board.grants(['a', 'b', 'c'])).toEqual(new Map([['a', 90_000]]));
    const revoked = await board.revoke(['a'], 7_000);
    expect(revoked.targets.get('a')).toEqual({ req: 1, served: 1, due: 7_000 });
    expect(await board.grants(['a'])).toEqual(new Map());
    await board.writeServed([{ target: 'b', served: 2, grant: 95_000, grantWait: 2_000 }]);
    expect((await board.read()).targets.get('b')).toMatchObject({ grant: 95_000, grantWait: 2_000 });
    await board.writeServed([{ target: 'b', served: 3, grantWait: 2_000 }]);
    expect(await item()).not.toHaveProperty('grant:b');
    expect(await item()).not.toHaveProperty('grantWait:b');
    // Past 40 targets a read is split too.
    const many = Array.from({ length: 45 }, (_, i) => ({ target: `t-${i}`, served: 0, grant: 1_000 + i }));
    await board.writeServed(many);
    expect((await board.grants(many.map((m) => m.target))).get('t-44')).toBe(1_044);
  });

  it('a grant is written only while the version is the one the round read; else the part is written without it', async () => {
    const board = new DynamoWorkBoard(dynamo.doc, TABLE);
    await board.request(['a']);
    const granted = await board.writeServed([{ target: 'a', served: 1, grant: 90_000 }], 1);
    expect(granted.targets.get('a')?.grant).toBe(90_000);
    await board.request(['a']); // version 2: a router staged meanwhile
    const withheld = await board.writeServed(
      [{ target: 'a', served: 1, due: 3_000, grant: 95_000, grantWait: 2_000 }],
      1,
    );
    expect(withheld.targets.get('a')).toEqual({ req: 2, served: 1, due: 3_000 });
    expect(await item()).not.toHaveProperty('grant:a');
    expect(await item()).not.toHaveProperty('grantWait:a');
  });
});
