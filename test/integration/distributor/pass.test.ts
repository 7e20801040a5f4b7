import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { TargetSummary } from '../../../lib/distributor/report';
import { ManagementClient } from '../../../lib/rabbitmq/management';
import { eventually } from '../../harness/eventually';
import { STATE_TABLE, scenario, tally } from './fixture';

const byQueue = (target: TargetSummary | undefined) =>
  Object.fromEntries((target?.queues ?? []).map((q) => [q.name, q.moved]));

describe('distribution pass (real RabbitMQ, dynalite)', () => {
  scenario(
    "the reference project's scenario: 2 × 500 into max length 200 → 100 each; full → nothing; after a purge → 100 each",
    async (f) => {
      const staging = await f.stage(
        'worker-input',
        { 'x-max-length': 200, 'x-max-priority': 9 },
        {
          'worker-input»/tenant1': 500,
          'worker-input»/tenant2': 500,
        },
      );
      const distributor = f.distributor();

      const first = await distributor.runPass(60_000);
      expect(byQueue(first.targets[0])).toEqual({ 'worker-input»/tenant1': 100, 'worker-input»/tenant2': 100 });
      expect(first.targets[0]).toMatchObject({
        outcome: 'distributed',
        maxLength: 200,
        depth: 0,
        capacity: 200,
        planned: 200,
        moved: 200,
      });
      expect(await f.depth('worker-input')).toBe(200);

      const full = await distributor.runPass(60_000);
      expect(full.targets[0]).toMatchObject({ outcome: 'below-threshold', depth: 200, capacity: 0, moved: 0 });
      expect([await f.depth('worker-input'), ...(await Promise.all(staging.map(f.depth)))]).toEqual([200, 400, 400]);

      await f.withChannel((channel) => channel.purgeQueue('worker-input'));
      const again = await distributor.runPass(60_000);
      expect(byQueue(again.targets[0])).toEqual({ 'worker-input»/tenant1': 100, 'worker-input»/tenant2': 100 });
      expect([await f.depth('worker-input'), ...(await Promise.all(staging.map(f.depth)))]).toEqual([200, 300, 300]);
    },
  );

  scenario('skewed room: staging depths 1, 5 and 1000 into free room 300 → 1, 5 and 294', async (f) => {
    await f.stage('skew', { 'x-max-length': 300 }, { 'skew»/a': 1, 'skew»/b': 5, 'skew»/c': 1000 });
    const summary = await f.distributor().runPass(60_000);
    expect(byQueue(summary.targets[0])).toEqual({ 'skew»/a': 1, 'skew»/b': 5, 'skew»/c': 294 });
    expect(await f.depth('skew')).toBe(300);
    expect(await f.depth('skew»/c')).toBe(706);
  });

  scenario('weights from DISTRIBUTOR_WEIGHTS divide the room', async (f) => {
    await f.stage('weighted', { 'x-max-length': 400 }, { 'weighted»/vip/w1': 1000, 'weighted»/t2': 1000 });
    const weights = JSON.stringify([{ pattern: 'weighted»/vip/*', weight: 3 }]);
    const fair = await f.distributor({ DISTRIBUTOR_WEIGHTS: weights }).runPass(60_000);
    expect(byQueue(fair.targets[0])).toEqual({ 'weighted»/t2': 100, 'weighted»/vip/w1': 300 });
  });

  scenario(
    'shares are per tenant: room 110, tenant A over 10 workflows and B over 1 → 55 and 55 (issue 37)',
    async (f) => {
      const workflows = Array.from({ length: 10 }, (_, i) => [`split»/A/w${i}`, 100] as const);
      await f.stage('split', { 'x-max-length': 110 }, { ...Object.fromEntries(workflows), 'split»/B/w': 200 });
      const moved = byQueue((await f.distributor().runPass(60_000)).targets[0]);
      const ofA = Object.entries(moved).filter(([name]) => name.startsWith('split»/A/'));
      expect(ofA.reduce((n, [, share]) => n + share, 0)).toBe(55);
      expect(moved['split»/B/w']).toBe(55);
      expect(await f.depth('split')).toBe(110);
    },
  );

  scenario(
    'fair by bytes: A’s messages 10 × B’s bytes, room 22 → A 2, B 20, by the sizes the listing shows',
    async (f) => {
      await f.declare('bytes', { 'x-max-length': 22 });
      await f.record('bytes', ['bytes»/A/w', 'bytes»/B/w']);
      for (const [queue, size] of [
        ['bytes»/A/w', 10_000],
        ['bytes»/B/w', 1_000],
      ] as const) {
        await f.declare(queue);
        await f.withChannel(async (channel) => {
          for (let i = 0; i < 50; i++) channel.sendToQueue(queue, Buffer.alloc(size), { persistent: true });
          await channel.waitForConfirms();
        });
      }
      await f.listed(['bytes»/A/w', 'bytes»/B/w']);
      // The listing's byte counts may trail its message counts by a stats interval.
      const management = new ManagementClient(f.env.RABBITMQ_MANAGEMENT_URL!, f.env.RABBITMQ_VHOST!);
      await eventually(async () => {
        const sized = (await management.listQueues()).filter(
          (q) => q.name.startsWith('bytes»/') && q.message_bytes_ready,
        );
        return sized.length === 2 || undefined;
      }, 'the listing shows both staging queues with their bytes');
      const distributor = f.distributor({ DISTRIBUTOR_FAIR_BY: 'bytes' });
      const moved = byQueue((await distributor.runPass(60_000)).targets[0]);
      expect(moved).toEqual({ 'bytes»/A/w': 2, 'bytes»/B/w': 20 });
      // A pass asked for one target reads the sizes with the target's shape, not from a listing.
      await f.drain('bytes');
      const asked = byQueue((await distributor.runPass(60_000, { target: 'bytes' })).targets[0]);
      expect(asked).toEqual({ 'bytes»/A/w': 2, 'bytes»/B/w': 20 });
    },
  );

  scenario(
    'fair by a declared cost: A’s messages declare 10, B’s 1; the costs are learned from the moves and each pass moves equal work',
    async (f) => {
      await f.declare('declared', { 'x-max-length': 11 });
      await f.record('declared', ['declared»/A/w', 'declared»/B/w']);
      for (const [queue, cost] of [
        ['declared»/A/w', 10],
        ['declared»/B/w', 1],
      ] as const) {
        await f.declare(queue);
        await f.withChannel(async (channel) => {
          for (let i = 0; i < 200; i++) {
            channel.sendToQueue(queue, Buffer.from('{}'), { persistent: true, headers: { 'x-cost': cost } });
          }
          await channel.waitForConfirms();
        });
      }
      await f.listed(['declared»/A/w', 'declared»/B/w']);
      const distributor = f.distributor({ DISTRIBUTOR_FAIR_BY: 'header:x-cost' });
      const work = { A: 0, B: 0 };
      for (let pass = 0; pass < 8; pass++) {
        const moved = byQueue((await distributor.runPass(60_000)).targets[0]);
        await f.drain('declared');
        // The first pass knows no cost (each tenant counts as an average one); the next know both.
        if (pass === 0) continue;
        work.A += (moved['declared»/A/w'] ?? 0) * 10;
        work.B += moved['declared»/B/w'] ?? 0;
      }
      // The first pass's advance to A is paid back within the deficit bound (2 of A's messages).
      expect(Math.abs(work.A - work.B)).toBeLessThanOrEqual(20);
      expect((work.A + work.B) ** 2 / (2 * (work.A ** 2 + work.B ** 2))).toBeGreaterThanOrEqual(0.95);
      const { Item } = await f.dynamo.doc.send(
        new GetCommand({ TableName: STATE_TABLE, Key: { pk: 'rotation#declared' }, ConsistentRead: true }),
      );
      expect(Item?.costs).toEqual({ 'declared»/A': 10, 'declared»/B': 1 });
    },
  );

  scenario(
    'the reference planner is selectable, for comparison: room 300 over depths 1, 5 and 1000 → 1, 5 and 100',
    async (f) => {
      await f.stage('ref', { 'x-max-length': 300 }, { 'ref»/a': 1, 'ref»/b': 5, 'ref»/c': 1000 });
      const reference = await f.distributor({ DISTRIBUTOR_PLANNER: 'reference' }).runPass(60_000);
      expect(reference.planner).toBe('reference');
      expect(byQueue(reference.targets[0])).toEqual({ 'ref»/a': 1, 'ref»/b': 5, 'ref»/c': 100 });
    },
  );

  scenario('keeps every message property and the body, and the target delivers by priority', async (f) => {
    await f.declare('props', { 'x-max-priority': 9 });
    await f.declare('props»/t1');
    const properties = {
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      headers: { 'x-tenant': 't1', nested: { a: 1 }, list: ['x', 'y'] },
      deliveryMode: 2,
      correlationId: 'corr-1',
      replyTo: 'reply-queue',
      expiration: '600000',
      timestamp: 1_700_000_000,
      type: 'DocumentTask',
      appId: 'worker-a',
    };
    await f.withChannel(async (channel) => {
      for (const priority of [1, 9, 5]) {
        channel.publish('', 'props»/t1', Buffer.from(`{"p":${priority}}`), {
          ...properties,
          priority,
          messageId: `m-${priority}`,
        });
      }
      await channel.waitForConfirms();
    });
    await f.listed(['props»/t1']);
    expect((await f.distributor().runPass(60_000)).moved).toBe(3);

    const received = await f.withChannel(async (channel) => {
      const messages = [];
      for (
        let message = await channel.get('props', { noAck: true });
        message;
        message = await channel.get('props', { noAck: true })
      ) {
        messages.push(message);
      }
      return messages;
    });
    expect(received.map((m) => m.properties.messageId)).toEqual(['m-9', 'm-5', 'm-1']);
    for (const message of received) {
      expect(message.properties).toMatchObject(properties);
      expect(message.content.toString()).toBe(`{"p":${message.properties.priority}}`);
    }
  });

  scenario(
    'a staging queue without a target is skipped with a warning, or its target is created, as configured',
    async (f) => {
      await f.stage('missing', null, { 'missing»/t1': 80 });

      const skipped = await f.distributor().runPass(60_000);
      expect(skipped.targets[0]).toMatchObject({ target: 'missing', outcome: 'target-missing', moved: 0 });
      expect(f.warnings.map((w) => w.details.target)).toEqual(['missing']);
      await expect(f.depth('missing')).rejects.toThrow(/404|NOT_FOUND/);

      const created = await f
        .distributor({
          DISTRIBUTOR_MISSING_TARGET: 'create',
          DISTRIBUTOR_TARGETS: JSON.stringify({ missing: { arguments: { 'x-max-length': 50, 'x-max-priority': 9 } } }),
        })
        .runPass(60_000);
      expect(created.targets[0]).toMatchObject({ outcome: 'distributed', created: true, maxLength: 50, moved: 50 });
      const listed = await f.rabbit.api<{ arguments: Record<string, unknown>; durable: boolean }>(
        'GET',
        `/api/queues/${encodeURIComponent(f.rabbit.vhost)}/missing`,
      );
      expect(listed).toMatchObject({ durable: true, arguments: { 'x-max-length': 50, 'x-max-priority': 9 } });
      expect([await f.depth('missing'), await f.depth('missing»/t1')]).toEqual([50, 30]);
    },
  );

  // Issue 26 (RabbitMQ 4 gap c): on a vhost whose default type is quorum (Amazon MQ's 4.x) a created
  // queue without a type is quorum, which refuses x-max-priority; the default names classic.
  scenario(
    'a target created with DISTRIBUTOR_NEW_TARGET_ARGUMENTS by default is a classic queue, by name',
    async (f) => {
      await f.stage('made', null, { 'made»/t1': 3 });
      const created = await f.distributor({ DISTRIBUTOR_MISSING_TARGET: 'create' }).runPass(60_000);
      expect(created.targets[0]).toMatchObject({ outcome: 'distributed', created: true, moved: 3 });
      const listed = await f.rabbit.api<{ arguments: Record<string, unknown> }>(
        'GET',
        `/api/queues/${encodeURIComponent(f.rabbit.vhost)}/made`,
      );
      expect(listed.arguments).toEqual({ 'x-queue-type': 'classic', 'x-max-priority': 9 });
    },
  );

  scenario(
    'with capacity smaller than the number of queues, the remainder rotates across passes (state in DynamoDB)',
    async (f) => {
      await f.stage('rot', { 'x-max-length': 2 }, { 'rot»/a': 5, 'rot»/b': 5, 'rot»/c': 5 });
      const distributor = f.distributor({}, undefined, undefined, undefined, { refillThresholdPercent: 0 });

      const served: string[][] = [];
      for (let pass = 0; pass < 3; pass++) {
        const summary = await distributor.runPass(60_000);
        served.push(summary.targets[0]!.queues.filter((q) => q.moved > 0).map((q) => q.name));
        await f.withChannel((channel) => channel.purgeQueue('rot'));
      }
      expect(served).toEqual([
        ['rot»/a', 'rot»/b'],
        ['rot»/a', 'rot»/c'],
        ['rot»/b', 'rot»/c'],
      ]);
      const { Item } = await f.dynamo.doc.send(new GetCommand({ TableName: STATE_TABLE, Key: { pk: 'rotation#rot' } }));
      expect(Item).toMatchObject({ cursor: 'rot»/c', version: 3 });
    },
  );

  scenario(
    "an execution's passes read a target's rotation once while they hold its lease, and rotate as separate passes do",
    async (f) => {
      await f.stage('rot1', { 'x-max-length': 2 }, { 'rot1»/a': 5, 'rot1»/b': 5, 'rot1»/c': 5 });
      const distributor = f.distributor({}, undefined, undefined, undefined, { refillThresholdPercent: 0 });
      const send = jest.spyOn(f.dynamo.doc, 'send');
      const rotationReads = () =>
        send.mock.calls.filter(
          ([command]) => command instanceof GetCommand && command.input.Key?.pk === 'rotation#rot1',
        ).length;

      const session = distributor.session(60_000);
      const served: string[][] = [];
      try {
        for (let pass = 0; pass < 3; pass++) {
          const summary = await session.pass({ targets: ['rot1'], version: 0 });
          served.push(summary.targets[0]!.queues.filter((q) => q.moved > 0).map((q) => q.name));
          await f.withChannel((channel) => channel.purgeQueue('rot1'));
        }
      } finally {
        await session.close();
      }
      expect(served).toEqual([
        ['rot1»/a', 'rot1»/b'],
        ['rot1»/a', 'rot1»/c'],
        ['rot1»/b', 'rot1»/c'],
      ]);
      expect(rotationReads()).toBe(1);
      const { Item } = await f.dynamo.doc.send(
        new GetCommand({ TableName: STATE_TABLE, Key: { pk: 'rotation#rot1' } }),
      );
      expect(Item).toMatchObject({ cursor: 'rot1»/c', version: 3 });
      // A later execution (the lease given back) reads it again: the test's own read above, and its.
      const next = distributor.session(60_000);
      await next.pass({ targets: ['rot1'], version: 0 }).finally(() => next.close());
      expect(rotationReads()).toBe(3);
    },
  );

  scenario(
    'two passes started together never overfill a target, nor does a pass right after another (stale listing)',
    async (f) => {
      // No x-max-length: only the distributor's own limit stands between the target and overfilling.
      const staging = await f.stage('pair', {}, { 'pair»/a': 1000, 'pair»/b': 1000, 'pair»/c': 1000 });
      const settings = { DISTRIBUTOR_TARGETS: JSON.stringify({ pair: { maxLength: 300 } }) };
      const noThreshold = { refillThresholdPercent: 0 };

      const [one, two] = await Promise.all([
        f.distributor(settings, undefined, undefined, undefined, noThreshold).runPass(60_000),
        f.distributor(settings, undefined, undefined, undefined, noThreshold).runPass(60_000),
      ]);
      expect(one.moved + two.moved).toBe(300);
      // The second either found the lease taken, or took it after the first released it and found no room.
      const [winner, other] = one.moved === 300 ? [one, two] : [two, one];
      expect(winner.targets[0]!.outcome).toBe('distributed');
      expect(['leased-elsewhere', 'below-threshold']).toContain(other.targets[0]!.outcome);
      expect(await f.depth('pair')).toBe(300);

      const after = await f.distributor(settings, undefined, undefined, undefined, noThreshold).runPass(60_000);
      expect(after.targets[0]).toMatchObject({ depth: 300, capacity: 0, moved: 0 });
      expect(await f.depth('pair')).toBe(300);

      const ids = [...(await f.drain('pair')), ...(await Promise.all(staging.map(f.drain))).flat()];
      expect(tally(ids)).toMatchObject({ duplicates: 0 });
      expect(tally(ids).unique.size).toBe(3000);
    },
  );
});
