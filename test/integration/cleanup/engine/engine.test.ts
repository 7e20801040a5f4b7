import { BatchWriteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { z } from 'zod';
import type { OperationContext } from '../../../../lib/cleanup/engine/job-definition';
import { operationKey } from '../../../../lib/cleanup/engine/keys';
import { seededRandom } from '../../../../lib/cleanup/engine/random';
import type { DocumentPort } from '../../../../lib/cleanup/engine/stack-store';
import { createCleanupOperator } from '../../../../lib/cleanup/operator';
import {
  engineFor,
  leafIds,
  Recorder,
  stepUntil,
  type TreeNode,
  testJob,
  useDynamo,
} from '../../../harness/cleanup-test-job';

const TABLE = 'CleanupStackTable';

describe('cleanup engine on DynamoDB (dynalite)', () => {
  const dynamo = useDynamo();
  let jobs = 0;
  const nextJob = () => `test-job-${++jobs}`;
  const adapters = (seed = 1) => ({ doc: dynamo().doc, table: TABLE, random: seededRandom(seed) });
  const operator = () => createCleanupOperator(dynamo().doc, TABLE);

  it('fills an empty stack with the default operation, then runs every operation once and empties it', async () => {
    const recorder = new Recorder();
    const tree: TreeNode[] = [{ id: 'a', children: [{ id: 'a1' }, { id: 'a2' }] }, { id: 'b' }];
    const job = testJob(nextJob(), recorder, [tree]);
    const engine = engineFor(job, adapters());

    const first = await engine.step();
    expect(first).toMatchObject({
      job: job.name,
      outcome: 'supplied',
      kind: 'root',
      fill: true,
      children: 2,
      attempts: 1,
    });
    expect(await operator().stack(job.name)).toMatchObject({
      size: 2,
      byKind: { node: 2 },
      lastFill: { generation: 1, done: true },
    });

    const results = await stepUntil(engine, () => recorder.fills.length === 2);
    // The second fill finds nothing to supply: the default operation ran once per emptying.
    expect(results.map((r) => r.outcome).sort()).toEqual(['executed', 'executed', 'executed', 'executed', 'supplied']);
    expect(recorder.leaves.map((run) => run.id).sort()).toEqual(['a1', 'a2', 'b']);
    expect(await operator().stack(job.name)).toMatchObject({ size: 0, lastFill: { generation: 2, done: true } });
  });

  it('property: random trees of suppliers and operations run every leaf exactly once', async () => {
    const { tree } = fc.letrec<{ tree: TreeNode[]; node: TreeNode }>((tie) => ({
      tree: fc.array(tie('node'), { minLength: 0, maxLength: 4 }),
      node: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.record({ id: fc.constant('') }),
        fc.record({ id: fc.constant(''), children: tie('tree') }),
      ),
    }));
    // Give every node a unique id after generation, so leaves can be counted.
    const numbered = (nodes: TreeNode[], prefix: string): TreeNode[] =>
      nodes.map((n, i) => ({
        id: `${prefix}${i}`,
        ...(n.children ? { children: numbered(n.children, `${prefix}${i}.`) } : {}),
      }));

    await fc.assert(
      fc.asyncProperty(tree, fc.integer(), async (generated, seed) => {
        const nodes = numbered(generated, 'n');
        const recorder = new Recorder();
        const job = testJob(nextJob(), recorder, [nodes]);
        await stepUntil(engineFor(job, adapters(seed)), () => recorder.fills.length === 2, 1000);
        const ran = recorder.leaves.map((run) => run.id).sort();
        expect(ran).toEqual(leafIds(nodes).sort());
        expect((await operator().stack(job.name)).size).toBe(0);
      }),
      { numRuns: 40, seed: 20261129 },
    );
  });

  it('pushes children in random order: each position is equally likely to run first (seeded, chi-square)', async () => {
    const parents = 160;
    const width = 4;
    const tree = Array.from({ length: parents }, (_, p) => ({
      id: `p${p}`,
      children: Array.from({ length: width }, (_, c) => ({ id: `p${p}c${c}` })),
    }));
    const recorder = new Recorder();
    const job = testJob(nextJob(), recorder, [tree]);
    await stepUntil(engineFor(job, adapters(42)), () => recorder.fills.length === 2);

    // One stepper runs the newest first, so the order a parent's leaves ran in is the order they were pushed in.
    const firstChild = new Array<number>(width).fill(0);
    const orders = new Set<string>();
    for (let p = 0; p < parents; p++) {
      const order = recorder.leaves
        .filter((run) => run.id.startsWith(`p${p}c`))
        .map((run) => run.id.slice(`p${p}c`.length));
      expect(order.sort((a, b) => a.localeCompare(b))).toHaveLength(width);
      const ranFirst = recorder.leaves.find((run) => run.id.startsWith(`p${p}c`))!.id;
      firstChild[Number(ranFirst.slice(`p${p}c`.length))]! += 1;
      orders.add(
        recorder.leaves
          .filter((run) => run.id.startsWith(`p${p}c`))
          .map((run) => run.id)
          .join(),
      );
    }
    const expected = parents / width;
    const chiSquare = firstChild.reduce((sum, observed) => sum + (observed - expected) ** 2 / expected, 0);
    expect(chiSquare).toBeLessThan(16.27); // 3 degrees of freedom, p = 0.001
    expect(orders.size).toBeGreaterThan(18); // most of the 24 permutations of 4 children occur
    // The parents themselves were pushed by the default operation in random order too.
    const suppliers = recorder.suppliers.map((id) => Number(id.slice(1)));
    expect(suppliers).not.toEqual([...suppliers].sort((a, b) => a - b));
    expect(suppliers).not.toEqual([...suppliers].sort((a, b) => b - a));
  }, 300_000); // CPU-bound: 40 s beside other files and two CPU hogs

  it('dead-letters a poison operation after maxAttempts with its error, and the rest of the job finishes', async () => {
    const recorder = new Recorder();
    const poisoned = testJob(nextJob(), recorder, [
      [{ id: 'p1', poison: true }, { id: 'x' }, { id: 'y' }, { id: 'z' }],
    ]);
    const results = await stepUntil(
      engineFor(poisoned, adapters(), { maxAttempts: 3 }),
      () => recorder.fills.length === 2,
    );

    const poison = results.filter((r) => r.kind === 'poison');
    expect(poison.map((r) => [r.outcome, r.attempts])).toEqual([
      ['failed', 1],
      ['failed', 2],
      ['dead-lettered', 3],
    ]);
    expect(recorder.leaves.map((run) => run.id).sort()).toEqual(['x', 'y', 'z']);
    const dead = await operator().deadLetters(poisoned.name);
    expect(dead).toEqual([
      expect.objectContaining({
        kind: 'poison',
        attempts: 3,
        payload: { id: 'p1' },
        error: 'Error: poison p1 always fails',
      }),
    ]);
  });

  it.each([
    ['an unknown kind', { kind: 'vanished', payload: '{}' }, 'unknown operation kind "vanished"'],
    ['a payload that is not JSON', { kind: 'node', payload: '{"id":' }, 'payload of kind "node" is not valid JSON'],
    ['a payload its schema rejects', { kind: 'node', payload: '{"id":""}' }, 'payload of kind "node" is invalid'],
    ['an item without a payload', { kind: 'node' }, 'stored item is malformed'],
  ])('sets aside an operation with %s at once, without running it', async (_, fields, error) => {
    const recorder = new Recorder();
    const job = testJob(nextJob(), recorder, [[{ id: 'after' }]]);
    await dynamo().doc.send(
      new PutCommand({ TableName: TABLE, Item: { pk: job.name, sk: operationKey(7, 0), attempts: 0, ...fields } }),
    );
    const engine = engineFor(job, adapters());
    const result = await engine.step();
    expect(result).toMatchObject({ outcome: 'dead-lettered', attempts: 1, error: expect.stringContaining(error) });
    expect(await operator().deadLetters(job.name)).toEqual([
      expect.objectContaining({ error: expect.stringContaining(error) }),
    ]);
    await stepUntil(engine, () => recorder.fills.length === 2);
    expect(recorder.leaves.map((run) => run.id)).toEqual(['after']);
  });

  it('with the default cap, stores a child just under it and rejects one just over it, never reaching the 400 KB item limit', async () => {
    const cap = 350_000;
    const sized = (bytes: number) => ({ id: 'x'.repeat(bytes - '{"id":""}'.length) });
    const recorder = new Recorder();
    const fits = testJob(nextJob(), recorder, [[sized(cap)]]);
    expect(await engineFor(fits, adapters(), { maxPayloadBytes: cap }).step()).toMatchObject({
      outcome: 'supplied',
      children: 1,
    });
    const tooLarge = testJob(nextJob(), new Recorder(), [[sized(cap + 1)]]);
    expect(await engineFor(tooLarge, adapters(), { maxPayloadBytes: cap }).step()).toMatchObject({
      outcome: 'failed',
      error: expect.stringContaining(`whose payload is ${cap + 1} bytes; the cap is ${cap} bytes`),
    });
    await stepUntil(engineFor(fits, adapters(), { maxPayloadBytes: cap }), () => recorder.leaves.length === 1);
  });

  it('writes children again that DynamoDB left unprocessed in a batch', async () => {
    // dynalite always processes whole batches; this port passes half of each batch on and reports the rest unprocessed.
    const doc = dynamo().doc;
    let partialBatches = 0;
    const port: DocumentPort = {
      send: (async (command: Parameters<DocumentPort['send']>[0]) => {
        if (!(command instanceof BatchWriteCommand)) return doc.send(command);
        const [[table, requests]] = Object.entries(command.input.RequestItems!) as [[string, unknown[]]];
        const kept = requests.slice(0, Math.ceil(requests.length / 2));
        const left = requests.slice(kept.length);
        await doc.send(new BatchWriteCommand({ RequestItems: { [table]: kept as never } }));
        if (left.length > 0) partialBatches++;
        return { UnprocessedItems: left.length > 0 ? { [table]: left } : {} };
      }) as DocumentPort['send'],
    };
    const recorder = new Recorder();
    const ids = Array.from({ length: 60 }, (_, i) => `leaf${i}`);
    const job = testJob(nextJob(), recorder, [ids.map((id) => ({ id }))]);
    await stepUntil(engineFor(job, { ...adapters(), doc: port }), () => recorder.fills.length === 2);
    expect(partialBatches).toBeGreaterThan(3);
    expect(recorder.leaves.map((run) => run.id).sort()).toEqual([...ids].sort());
  });

  it('fails a supplier whose child is too large for an item, naming its kind and size, before writing anything', async () => {
    const recorder = new Recorder();
    const job = testJob(nextJob(), recorder, [[{ id: 'x'.repeat(2000) }]]);
    const result = await engineFor(job, adapters(), { maxPayloadBytes: 1000 }).step();
    expect(result).toMatchObject({ outcome: 'failed', kind: 'root', fill: true });
    expect(result.error).toMatch(/supplied child 0 of kind "node" whose payload is 2009 bytes; the cap is 1000 bytes/);
    expect((await operator().stack(job.name)).size).toBe(0);
  });

  it('passes the dry-run setting to every operation', async () => {
    const recorder = new Recorder();
    const job = testJob(nextJob(), recorder, [[{ id: 'a', children: [{ id: 'a1' }] }, { id: 'b' }]]);
    await stepUntil(engineFor(job, adapters(), { dryRun: true }), () => recorder.fills.length === 2);
    expect(recorder.leaves.map((run) => [run.id, run.dryRun]).sort()).toEqual([
      ['a1', true],
      ['b', true],
    ]);
  });

  it('offers the invocation’s time left to the operation it runs, and none when the caller set no deadline', async () => {
    const seen: (number | undefined)[] = [];
    let now = 1_000_000;
    const job = {
      name: nextJob(),
      defaultOperation: { kind: 'default', payload: {} },
      kinds: {
        default: {
          payload: z.object({}),
          async execute(_payload: unknown, context: OperationContext) {
            now += 250; // the operation's own work takes time on the engine's clock
            seen.push(context.timeLeftMs?.());
            return [];
          },
        },
      },
    };
    const engine = engineFor(job, { ...adapters(), clock: () => now });
    await engine.step(now + 10_000);
    await engine.step();
    expect(seen).toEqual([9_750, undefined]);
  });

  it('says so, and touches nothing, for a job with no operations registered', async () => {
    const name = nextJob();
    const engine = engineFor({ name, defaultOperation: { kind: 'default', payload: {} }, kinds: {} }, adapters());
    expect(await engine.step()).toMatchObject({ job: name, outcome: 'no-operations', children: 0 });
    expect(await operator().stack(name)).toEqual({ job: name, size: 0, claimed: 0, byKind: {}, top: [] });
  });

  it('answers busy while the only operation is claimed by another invocation, and takes it over once its lease expired', async () => {
    const recorder = new Recorder();
    const job = testJob(nextJob(), recorder, [[{ id: 'only' }]]);
    let now = 1_000_000;
    const at = { ...adapters(), clock: () => now };
    await engineFor(job, at).step(); // fills
    const stalled = {
      ...job,
      kinds: { ...job.kinds, node: { ...job.kinds.node!, execute: () => new Promise<undefined>(() => {}) } },
    };
    void engineFor(stalled, at).step(); // claims `only` and never finishes
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await engineFor(job, at).step()).toMatchObject({ outcome: 'busy' });
    now += 60_001;
    expect(await engineFor(job, at).step()).toMatchObject({ outcome: 'executed', attempts: 2 });
    expect(recorder.leaves.map((run) => run.id)).toEqual(['only']);
  });
});
