import { quietFirstSettingsOf } from '../../../lib/distributor/config';
import { createDistributor } from '../../../lib/distributor/pass';
import { DynamoLeaseStore } from '../../../lib/distributor/stores/lease-store';
import { DynamoRotationStore, DynamoTunedLengthStore } from '../../../lib/distributor/stores/rotation-store';
import { DynamoTenantControlStore } from '../../../lib/distributor/stores/tenant-control-store';
import { amqpUser } from '../../../lib/platform/config';
import { ManagementClient } from '../../../lib/rabbitmq/management';
import { distributorSettings, warningReport } from '../../../lib/wiring/distributor';
import { type DistributorFixture, STATE_TABLE, scenario, tally } from './fixture';

const target = 'work';
const noisy = `${target}»/noisy`;
const quiet = `${target}»/quiet`;
/** What SPEC §1's counter gives both tenants once each sent more than 20 documents: level 9. */
const level9 = { priority: 1 };

/** A distributor with quiet tenants first's settings from `env` (the composition root's, plus them). */
function distributor(f: DistributorFixture, env: Record<string, string>) {
  const config = f.config(env, { idleStopMs: 200 });
  const management = new ManagementClient(f.rabbit.managementUrl, f.rabbit.vhost);
  return createDistributor({
    settings: { ...distributorSettings(config), quietFirst: quietFirstSettingsOf(config) },
    listQueues: () => management.listQueues(),
    listPolicies: () => management.listPolicies(),
    openChannel: () => f.session.openConfirmChannel(),
    leases: new DynamoLeaseStore(f.dynamo.doc, STATE_TABLE),
    rotations: new DynamoRotationStore(f.dynamo.doc, STATE_TABLE),
    publisherUser: amqpUser(config.AMQP_URL),
    controls: new DynamoTenantControlStore(f.dynamo.doc, STATE_TABLE, { skipped: () => undefined }),
    tuning: { rate: async () => undefined, lengths: new DynamoTunedLengthStore(f.dynamo.doc, STATE_TABLE) },
    report: warningReport((message, details) => f.warnings.push({ message, details })),
  });
}

/** Deliveries in the broker's order (priority first), with their priorities, one at a time. */
const deliveries = (f: DistributorFixture, queue: string) =>
  f.withChannel(async (channel) => {
    const got: { id: string; priority: number | undefined }[] = [];
    for (;;) {
      const message = await channel.get(queue, { noAck: true });
      if (!message) return got;
      got.push({ id: String(message.properties.messageId), priority: message.properties.priority });
    }
  });

/**
 * The noisy tenant's backlog fills the target first; then one quiet message arrives. Its staging
 * queue holds 1, the noisy one 200 more: backlog mode moves it at once at the top priority, ahead of
 * the whole noisy buffer; keep mode leaves it behind (here in staging: the target is full).
 */
async function floodThenQuiet(f: DistributorFixture, env: Record<string, string>) {
  await f.declare(target, { 'x-max-length': 100, 'x-max-priority': 10 });
  await f.declare(noisy);
  await f.declare(quiet);
  await f.publish(noisy, 300, 'noisy', level9);
  await f.listed([noisy]);
  const pass = distributor(f, env);
  const first = await pass.runPass(60_000);
  await f.publish(quiet, 1, 'quiet', level9);
  await f.listed([quiet]);
  const second = await pass.runPass(60_000);
  return { first, second, inTarget: await deliveries(f, target) };
}

describe('quiet tenants first, on the real broker', () => {
  scenario('backlog: a quiet message overtakes the noisy backlog already in the target', async (f) => {
    const { first, second, inTarget } = await floodThenQuiet(f, { DISTRIBUTOR_MOVE_PRIORITY: 'backlog' });
    // The noisy queue left the 5 % reserve (5 of 100); its backlog of 300 is band 5.
    expect(first.moved).toBe(95);
    expect(second.targets[0]).toMatchObject({ outcome: 'distributed', moved: 1, depth: 95 });
    expect(inTarget[0]).toEqual({ id: 'quiet-0', priority: 10 });
    expect(inTarget.slice(1).every((d) => d.id.startsWith('noisy-') && d.priority === 8)).toBe(true);
    expect(inTarget).toHaveLength(96);
    // Nothing lost, nothing twice: what is not in the target is still staged.
    const rest = await f.drain(noisy);
    const { unique, duplicates } = tally([...inTarget.map((d) => d.id), ...rest]);
    expect(duplicates).toBe(0);
    expect(unique.size).toBe(301);
  });

  scenario('keep (SPEC §1 as before): the quiet message waits behind the full target', async (f) => {
    const { first, second, inTarget } = await floodThenQuiet(f, {});
    expect(first.moved).toBe(100);
    expect(second.targets[0]).toMatchObject({ outcome: 'below-threshold', moved: 0 });
    expect(inTarget.map((d) => d.id)).not.toContain('quiet-0');
    expect(inTarget.every((d) => d.priority === 1)).toBe(true);
    expect(await f.depth(quiet)).toBe(1);
  });
});
