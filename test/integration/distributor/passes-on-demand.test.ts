import { createDistributor, type Distributor } from '../../../lib/distributor/pass';
import type { PassSummary } from '../../../lib/distributor/report';
import { distributorSettings, warningReport } from '../../../lib/distributor/service';
import { DynamoRotationStore } from '../../../lib/distributor/stores/rotation-store';
import { DynamoTenantControlStore } from '../../../lib/distributor/stores/tenant-control-store';
import { DynamoTunedLengthStore } from '../../../lib/distributor/stores/tuned-length-store';
import { DynamoLeaseStore, type LeaseStore } from '../../../lib/pass-requests/lease-store';
import type { PassRequestEvent } from '../../../lib/pass-requests/pass-trigger';
import { passRequester, type RequestPass } from '../../../lib/pass-requests/requester';
import { amqpUser } from '../../../lib/rabbitmq/amqp-url';
import { ManagementClient } from '../../../lib/rabbitmq/management';
import { eventually } from '../../harness/eventually';
import { inProcessPassTrigger } from '../../harness/pass-requests-trigger';
import { type DistributorFixture, STATE_TABLE, scenario, tally } from './fixture';

const target = 'worker-input';
const maxLength = 100;

/**
 * The distributor as deployed with passes on demand, in process: requests go through the lease item,
 * started passes run like async invokes (each waits its delay, then runs one pass), and every lease
 * taken and given back is watched, to see how many passes hold the target at once.
 */
function onDemand(
  f: DistributorFixture,
  overrides: Record<string, string>,
  failFirst = 0,
  openChannel = () => f.session.openConfirmChannel(),
) {
  const config = f.config({
    DISTRIBUTOR_FOLLOW_UP_DELAY_MS: '50',
    DISTRIBUTOR_FOLLOW_UP_MAX_DELAY_MS: '400',
    DISTRIBUTOR_REQUEST_GRACE_MS: '1000',
    DISTRIBUTOR_IDLE_STOP_MS: '200',
    ...overrides,
  });
  const inner = new DynamoLeaseStore(f.dynamo.doc, STATE_TABLE);
  const watch = { holding: 0, maxHolding: 0, released: 0, started: 0, failed: 0, passes: [] as PassSummary[] };
  const state: LeaseStore = {
    ...Object.fromEntries(
      (['requestPass', 'handOver', 'dropRequest'] as const).map((name) => [name, inner[name].bind(inner)]),
    ),
    async acquireLease(...args) {
      const acquired = await inner.acquireLease(...args);
      if (acquired) watch.maxHolding = Math.max(watch.maxHolding, ++watch.holding);
      return acquired;
    },
    async releaseLease(...args) {
      watch.holding--;
      watch.released++;
      return inner.releaseLease(...args);
    },
  } as LeaseStore;
  const management = new ManagementClient(f.rabbit.managementUrl, f.rabbit.vhost);
  let failuresLeft = failFirst;
  let distributor: Distributor;
  const trigger = inProcessPassTrigger(
    async (event: PassRequestEvent) => {
      watch.started++;
      await new Promise((resolve) => setTimeout(resolve, event.delayMs));
      watch.passes.push(await distributor.runPass(60_000, event));
    },
    (_event, error) => {
      if (error) watch.failed++;
    },
  );
  const requestPass: RequestPass = passRequester({
    leases: state,
    trigger,
    graceMs: config.DISTRIBUTOR_REQUEST_GRACE_MS,
  });
  // The pass asks for its follow-ups through the same requester as the router.
  distributor = createDistributor({
    settings: distributorSettings(config),
    publisherUser: amqpUser(config.AMQP_URL),
    openChannel,
    listQueues: async () => {
      if (failuresLeft-- > 0) throw new Error('management API unavailable');
      return management.listQueues();
    },
    listPolicies: () => management.listPolicies(),
    leases: state,
    rotations: new DynamoRotationStore(f.dynamo.doc, STATE_TABLE),
    report: warningReport((message, details) => f.warnings.push({ message, details })),
    controls: new DynamoTenantControlStore(f.dynamo.doc, STATE_TABLE),
    tuning: {
      rate: (queue, windowSeconds) => management.consumptionRate(queue, windowSeconds),
      lengths: new DynamoTunedLengthStore(f.dynamo.doc, STATE_TABLE),
    },
    requestPass,
  });
  return { config, state, watch, trigger, requestPass, distributor };
}

describe('passes on demand (real RabbitMQ, dynalite)', () => {
  scenario(
    'a storm of requests starts one pass at a time; follow-ups move every message, never overfilling',
    async (f) => {
      await f.declare(target, { 'x-max-length': maxLength, 'x-max-priority': 9 });
      await f.declare(`${target}»/a`);
      await f.declare(`${target}»/b`);
      await f.publish(`${target}»/a`, 300, 'a');
      await f.publish(`${target}»/b`, 200, 'b');
      const { watch, trigger, requestPass } = onDemand(f, {});

      // 50 routers staging at once; the listing has not even seen the messages yet.
      const outcomes = await Promise.all(Array.from({ length: 50 }, () => requestPass(target, 0)));
      // One start, and another only once a pass has let go of its lease (a slow machine lets one finish mid-storm).
      expect(outcomes.filter((o) => o === 'start').length).toBeLessThanOrEqual(1 + watch.released);

      // Workers take what the passes put in, a bit at a time, while the target's depth is watched.
      let maxDepth = 0;
      const consumed: string[] = [];
      while (consumed.length < 500) {
        maxDepth = Math.max(maxDepth, await f.depth(target));
        const taken = await f.withChannel(async (channel) => {
          const ids: string[] = [];
          for (let i = 0; i < 40; i++) {
            const message = await channel.get(target, { noAck: true });
            if (!message) break;
            ids.push(String(message.properties.messageId));
          }
          return ids;
        });
        consumed.push(...taken);
        // A burst of requests now and then, as routers would send while work is staged.
        await Promise.all(Array.from({ length: 10 }, () => requestPass(target, 0)));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await trigger.idle();

      const { unique, duplicates } = tally(consumed);
      expect(unique.size).toBe(500);
      expect(duplicates).toBe(0);
      expect(maxDepth).toBeLessThanOrEqual(maxLength);
      expect(watch.maxHolding).toBe(1);
      expect(watch.failed).toBe(0);
      // Debounced: far fewer passes than the ~1,000 requests (each pass moves up to 100).
      expect(watch.started).toBeLessThan(200);
      expect(await f.depth(`${target}»/a`)).toBe(0);
    },
  );

  scenario('a requested pass that fails does not stop the next: its request lapses after the grace', async (f) => {
    await f.declare(target, { 'x-max-length': maxLength });
    await f.declare(`${target}»/a`);
    await f.publish(`${target}»/a`, 10, 'a');
    const { watch, trigger, requestPass } = onDemand(f, {}, 1);

    expect(await requestPass(target, 0)).toBe('start');
    await trigger.idle();
    expect(watch.failed).toBe(1);
    // The failed pass's request still stands until it is overdue: requests meanwhile wait for it.
    expect(await requestPass(target, 0)).toBe('pending');
    const restarted = await eventually(
      async () => ((await requestPass(target, 0)) === 'start' ? true : undefined),
      'a request to start a pass once the failed one is overdue',
      5_000,
    );
    expect(restarted).toBe(true);
    await trigger.idle();
    expect(await f.depth(target)).toBe(10);
  });

  scenario('a pass killed while holding the lease does not stop the next: the lease expires', async (f) => {
    await f.declare(target, { 'x-max-length': maxLength });
    await f.declare(`${target}»/a`);
    await f.publish(`${target}»/a`, 10, 'a');
    const { state, trigger, requestPass } = onDemand(f, {});
    // A pass that timed out: it took the lease and never gave it back.
    const killedAt = Date.now();
    expect(await state.acquireLease(target, 'killed-pass', killedAt, killedAt + 1_000)).toBe(true);

    expect(await requestPass(target, 0)).toBe('wanted');
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await requestPass(target, 0)).toBe('start');
    await trigger.idle();
    expect(await f.depth(target)).toBe(10);
  });

  scenario('a pass whose moves failed asks for the next one, and that pass moves the messages', async (f) => {
    await f.declare(target, { 'x-max-length': maxLength });
    await f.declare(`${target}»/a`);
    await f.publish(`${target}»/a`, 10, 'a');
    // The first pass's movers cannot open a channel (its depth read opens the first one); later ones can.
    let broken = true;
    let opened = 0;
    const openChannel = async () => {
      if (broken && ++opened > 1) {
        broken = false;
        throw new Error('channel refused');
      }
      return f.session.openConfirmChannel();
    };
    const { trigger, requestPass, watch } = onDemand(f, {}, 0, openChannel);
    expect(await requestPass(target, 0)).toBe('start');
    await eventually(async () => ((await f.depth(target)) === 10 ? true : undefined), 'the follow-up to move them');
    await trigger.idle();
    const first = watch.passes[0]!.targets[0]!;
    expect(first.moved).toBe(0);
    expect(first.followUpMs).toBeGreaterThan(0);
  });
});
