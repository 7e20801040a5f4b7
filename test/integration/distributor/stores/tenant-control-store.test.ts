import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoTenantControlStore, TENANT_CONTROLS_KEY } from '../../../../lib/distributor/stores/tenant-control-store';
import { type DistributorFixture, STATE_TABLE, scenario } from '../fixture';

/** Issue 23 item 3: tenant ids as keys safe for any string, one bad entry never stops the rest, a pass never stops on the controls. */
describe('tenant controls through the store and a pass (dynalite, RabbitMQ)', () => {
  const store = (f: DistributorFixture) => new DynamoTenantControlStore(f.dynamo.doc, STATE_TABLE);
  const writeItem = (f: DistributorFixture, item: Record<string, unknown>) =>
    f.dynamo.doc.send(new PutCommand({ TableName: STATE_TABLE, Item: { pk: TENANT_CONTROLS_KEY, ...item } }));
  const moved = (pass: Awaited<ReturnType<ReturnType<DistributorFixture['distributor']>['runPass']>>) =>
    Object.fromEntries(
      pass.targets
        .flatMap((t) => t.queues)
        .filter((q) => q.moved > 0)
        .map((q) => [q.name, q.moved]),
    );

  scenario(
    'tenants named __proto__ and constructor are controlled like any other, and the pass honours it',
    async (f) => {
      await f.stage('ctl', {}, { 'ctl»/__proto__': 3, 'ctl»/constructor': 3, 'ctl»/tenant1': 3 });
      expect(await store(f).update('__proto__', { paused: true })).toEqual({ paused: true });
      await store(f).update('constructor', { weight: 2 });
      const controls = await store(f).read();
      expect(Object.keys(controls).sort()).toEqual(['__proto__', 'constructor']);
      expect(Object.getOwnPropertyDescriptor(controls, '__proto__')?.value).toEqual({ paused: true });

      // The per-queue planner reports the control's weight on the queue itself (the tenant planner, on its tenant).
      const pass = await f.distributor({ DISTRIBUTOR_PLANNER: 'queue' }).runPass(60_000);
      expect(moved(pass)).toEqual({ 'ctl»/constructor': 3, 'ctl»/tenant1': 3 });
      expect(pass.targets[0]!.queues.find((q) => q.name === 'ctl»/constructor')?.weight).toBe(2);
      expect(await f.depth('ctl»/__proto__')).toBe(3);
      expect(await store(f).update('__proto__', { paused: false })).toEqual({});
      expect(Object.keys(await store(f).read())).toEqual(['constructor']);
    },
  );

  scenario('a malformed entry is skipped and reported; the others apply', async (f) => {
    await f.stage('bad', {}, { 'bad»/tenant1': 3, 'bad»/tenant2': 3 });
    await writeItem(f, { controls: { tenant1: { paused: true }, tenant2: { weight: 'heavy' } }, version: 3 });

    const pass = await f.distributor().runPass(60_000);
    expect(moved(pass)).toEqual({ 'bad»/tenant2': 3 });
    expect(f.warnings.filter((w) => /tenant control/.test(w.message))).toEqual([
      {
        message: expect.stringMatching(/skipped/),
        details: { key: 'tenant2', problem: expect.stringMatching(/weight/) },
      },
    ]);
    // The CLI's next change keeps what it cannot read, and writes the rest.
    await store(f).update('tenant3', { weight: 4 });
    expect(await store(f).read()).toEqual({ tenant1: { paused: true }, tenant3: { weight: 4 } });
  });

  scenario('a pass that cannot read the controls distributes with the last good ones, and says so', async (f) => {
    await f.stage('lost', {}, { 'lost»/tenant1': 3, 'lost»/tenant2': 3 });
    await store(f).update('tenant1', { paused: true });
    const distributor = f.distributor();
    expect(moved(await distributor.runPass(60_000))).toEqual({ 'lost»/tenant2': 3 });

    await writeItem(f, { controls: 'not a map', version: 'seven' });
    await f.publish('lost»/tenant2', 2, 'again');
    const pass = await distributor.runPass(60_000);
    expect(pass.targets.map((t) => t.outcome)).toEqual(['distributed']);
    expect(await f.depth('lost»/tenant1')).toBe(3); // still paused
    expect(await f.depth('lost»/tenant2')).toBe(0);
    expect(f.warnings.map((w) => w.message)).toContainEqual(
      expect.stringMatching(/Could not read the tenant controls/),
    );
  });
});
