import type { DistributorTuning } from '../../../lib/distributor/config';
import { invocationRunner } from '../../../lib/distributor/execution';
import { createDistributor } from '../../../lib/distributor/pass';
import type { ExecutionSummary } from '../../../lib/distributor/report';
import { stagingSource } from '../../../lib/distributor/staging-source';
import { DynamoLeaseStore, type LeaseStore } from '../../../lib/distributor/stores/lease-store';
import { DynamoRotationStore, DynamoTunedLengthStore } from '../../../lib/distributor/stores/rotation-store';
import { DynamoTenantControlStore } from '../../../lib/distributor/stores/tenant-control-store';
import { amqpUser } from '../../../lib/platform/config';
import { ManagementClient } from '../../../lib/rabbitmq/management';
import { directRoutingDefaults } from '../../../lib/settings/common';
import { distributorSettings, runModelSettings, warningReport } from '../../../lib/wiring/distributor';
import { type RequestWork, workRequester } from '../../../lib/work-board/requester';
import { DynamoWorkBoard } from '../../../lib/work-board/work-board-store';
import { eventually } from '../../harness/eventually';
import { inProcessPassTrigger } from '../../harness/pass-requests-trigger';
import { type DistributorFixture, STATE_TABLE, scenario, tally } from './fixture';

const target = 'worker-input';
const maxLength = 100;
/** The bound of the heavier scenarios: each runs beside the file's others, on a 2-core machine others load too. */
const LOADED_MACHINE_MS = 300_000;

/**
 * The distributor as deployed with passes on demand, in process: routers' requests go on the work
 * board, started executions run like async invokes, and every lease, listing and execution is
 * watched: how many hold a target at once, how many run at once, how many lease requests at once.
 */
function onDemand(
  f: DistributorFixture,
  /** Fixed values shortened for the test, and DISTRIBUTOR_MAX_EXECUTIONS. */
  overrides: Partial<DistributorTuning> & { maxExecutions?: number } = {},
  options: {
    failStarts?: number;
    openChannel?: () => ReturnType<DistributorFixture['session']['openConfirmChannel']>;
  } = {},
) {
  const { maxExecutions, ...tuning } = overrides;
  const config = f.config(maxExecutions === undefined ? {} : { DISTRIBUTOR_MAX_EXECUTIONS: String(maxExecutions) }, {
    followUpDelayMs: 50,
    followUpMaxDelayMs: 400,
    requestGraceMs: 1000,
    idleStopMs: 200,
    boardPollMs: 50,
    waitBoundMs: 1000,
    ...tuning,
  });
  const inner = new DynamoLeaseStore(f.dynamo.doc, STATE_TABLE);
  const watch = {
    /** Per target, the owners holding its lease now (a renewal is the same owner again). */
    holding: new Map<string, Set<string>>(),
    maxHolding: 0,
    acquiring: 0,
    maxAcquiring: 0,
    executing: 0,
    maxExecuting: 0,
    started: 0,
    failed: 0,
    listings: 0,
    targetGets: 0,
    executions: [] as ExecutionSummary[],
  };
  const leases: LeaseStore = {
    async acquireLease(t, owner, ...rest) {
      watch.maxAcquiring = Math.max(watch.maxAcquiring, ++watch.acquiring);
      try {
        const acquired = await inner.acquireLease(t, owner, ...rest);
        if (acquired) {
          const owners = watch.holding.get(t) ?? new Set<string>();
          watch.holding.set(t, owners.add(owner));
          watch.maxHolding = Math.max(watch.maxHolding, owners.size);
        }
        return acquired;
      } finally {
        watch.acquiring--;
      }
    },
    async releaseLease(t, owner) {
      watch.holding.get(t)?.delete(owner);
      return inner.releaseLease(t, owner);
    },
  };
  const management = new ManagementClient(f.rabbit.managementUrl, f.rabbit.vhost);
  const report = warningReport((message, details) => f.warnings.push({ message, details }));
  const settings = distributorSettings(config);
  const runModel = runModelSettings(config);
  const distributor = createDistributor({
    settings,
    publisherUser: amqpUser(config.AMQP_URL),
    openChannel: options.openChannel ?? (() => f.session.openConfirmChannel()),
    listQueues: () => {
      watch.listings++;
      return management.listQueues();
    },
    listPolicies: () => management.listPolicies(),
    leases,
    rotations: new DynamoRotationStore(f.dynamo.doc, STATE_TABLE),
    report,
    controls: new DynamoTenantControlStore(f.dynamo.doc, STATE_TABLE),
    tuning: {
      rate: (queue, windowSeconds) => management.consumptionRate(queue, windowSeconds),
      lengths: new DynamoTunedLengthStore(f.dynamo.doc, STATE_TABLE),
    },
    staging: stagingSource({
      registry: f.registry,
      getQueue: (name) => {
        watch.targetGets++;
        return management.getQueue(name);
      },
      cacheMs: runModel.stagingCacheMs,
    }),
  });
  const board = new DynamoWorkBoard(f.dynamo.doc, STATE_TABLE);
  let failuresLeft = options.failStarts ?? 0;
  const trigger = inProcessPassTrigger(
    async (event) => {
      watch.started++;
      if (failuresLeft-- > 0) throw new Error('the invocation failed before it claimed a slot');
      watch.maxExecuting = Math.max(watch.maxExecuting, ++watch.executing);
      try {
        watch.executions.push(await run(event, 60_000));
      } finally {
        watch.executing--;
      }
    },
    (_event, error) => {
      if (error) watch.failed++;
    },
  );
  const run = invocationRunner({
    board,
    distributor,
    // No grants: these tests count executions and passes, which a revocation's wait would delay.
    direct: { ...directRoutingDefaults(), mode: 'off' },
    settings: runModel,
    graceMs: config.tuning.requestGraceMs,
    report,
    trigger,
    listQueues: () => {
      watch.listings++;
      return management.listQueues();
    },
    registry: f.registry,
  });
  const requestWork: RequestWork = workRequester({ board, trigger, graceMs: config.tuning.requestGraceMs });
  /**
   * Waits until `done`, asking again as a router's next batch would whenever no execution is in
   * flight: on a loaded machine a broker or DynamoDB call can pass its bound and end an execution
   * with work left, which the next request serves. Returns how many requests that took.
   */
  const servedUntil = async (targets: readonly string[], done: () => Promise<boolean>) => {
    let again = 0;
    await eventually(
      async () => {
        await trigger.idle();
        if (await done()) return true;
        again++;
        await requestWork(targets);
        return undefined;
      },
      `the executions to serve ${targets.length} target(s)`,
      120_000,
    );
    return again;
  };
  return { config, board, watch, trigger, requestWork, servedUntil, run, leases: inner };
}

describe('passes on demand: executions that follow the work board (real RabbitMQ, dynalite)', () => {
  scenario(
    'a storm of requests starts one execution; it refills the target as it drains, never overfilling, with no listing',
    async (f) => {
      await f.declare(target, { 'x-max-length': maxLength, 'x-max-priority': 9 });
      await f.record(target, [`${target}»/a`, `${target}»/b`]);
      await f.declare(`${target}»/a`);
      await f.declare(`${target}»/b`);
      await f.publish(`${target}»/a`, 300, 'a');
      await f.publish(`${target}»/b`, 200, 'b');
      // One start per grace is what the board guarantees: a start still unclaimed after the grace is
      // presumed lost. A loaded machine can keep the started execution from its slot for over a second.
      const { watch, trigger, requestWork } = onDemand(f, { requestGraceMs: 30_000 });

      // 50 router batches at once.
      const outcomes = await Promise.all(Array.from({ length: 50 }, () => requestWork([target])));
      expect(outcomes.filter((o) => o === 'started')).toEqual(['started']);

      // Workers take what the execution puts in, a bit at a time, while the target's depth is watched.
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
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await trigger.idle();

      const { unique, duplicates } = tally(consumed);
      expect(unique.size).toBe(500);
      expect(duplicates).toBe(0);
      expect(maxDepth).toBeLessThanOrEqual(maxLength);
      expect(watch.maxHolding).toBe(1);
      expect(watch.failed).toBe(0);
      // The one execution followed the drain itself: no router request after the storm was needed.
      expect(watch.started).toBeLessThanOrEqual(2);
      expect(watch.executions.reduce((n, e) => n + e.rounds, 0)).toBeGreaterThanOrEqual(5);
      // No whole-vhost listing on the hot path; the target's shape was read once (cached).
      expect(watch.listings).toBe(0);
      expect(watch.targetGets).toBe(1);
      expect(await f.depth(`${target}»/a`)).toBe(0);
    },
    LOADED_MACHINE_MS,
  );

  scenario(
    'one execution serves 60 busy targets; lease requests stay within the target concurrency',
    async (f) => {
      const targets = Array.from({ length: 60 }, (_, i) => `many-${String(i).padStart(2, '0')}`);
      for (const t of targets) {
        await f.declare(t, { 'x-max-length': 1_000 });
        await f.record(t, [`${t}»/x`, `${t}»/y`]);
        await f.declare(`${t}»/x`);
        await f.declare(`${t}»/y`);
        await f.publish(`${t}»/x`, 3, `${t}x`);
        await f.publish(`${t}»/y`, 2, `${t}y`);
      }
      const { watch, requestWork, servedUntil } = onDemand(f, { targetConcurrency: 8 });
      expect(await requestWork(targets)).toBe('started');
      const depths = async () => Promise.all(targets.map((t) => f.depth(t)));
      const again = await servedUntil(targets, async () => (await depths()).every((depth) => depth === 5));
      expect(await depths()).toEqual(targets.map(() => 5));
      // One execution, and one more only for each request made after one ended with work left.
      expect(watch.started).toBeLessThanOrEqual(1 + again);
      expect(watch.maxAcquiring).toBeLessThanOrEqual(8);
      expect(watch.listings).toBe(0);
      expect(f.warnings).toEqual([]);
    },
    LOADED_MACHINE_MS,
  );

  scenario('a started execution that failed does not stop the next: its start lapses after the grace', async (f) => {
    await f.declare(target, { 'x-max-length': maxLength });
    await f.record(target, [`${target}»/a`]);
    await f.declare(`${target}»/a`);
    await f.publish(`${target}»/a`, 10, 'a');
    const { board, config, watch, trigger, requestWork, servedUntil } = onDemand(f, {}, { failStarts: 1 });

    const startedAt = Date.now();
    expect(await requestWork([target])).toBe('started');
    await trigger.idle();
    expect(watch.failed).toBe(1);
    // The failed execution's start still stands until it is overdue: requests meanwhile wait for it.
    // Asked as of its start (a loaded machine can spend the whole grace on the failed run).
    const graceMs = config.tuning.requestGraceMs;
    const withinGrace = workRequester({ board, trigger, graceMs, now: () => startedAt });
    expect(await withinGrace([target])).toBe('queued');
    await eventually(
      async () => ((await requestWork([target])) === 'started' ? true : undefined),
      'a request to start an execution once the failed start is overdue',
      30_000,
    );
    await servedUntil([target], async () => (await f.depth(target)) === 10);
    expect(await f.depth(target)).toBe(10);
  });

  scenario('an execution killed holding its slot and a lease does not stop the next: both lapse', async (f) => {
    await f.declare(target, { 'x-max-length': maxLength });
    await f.record(target, [`${target}»/a`]);
    await f.declare(`${target}»/a`);
    await f.publish(`${target}»/a`, 10, 'a');
    const { board, config, leases, trigger, requestWork } = onDemand(f, { maxExecutions: 1 });
    // An execution that timed out: it claimed the slot and the lease and never gave them back.
    const killedAt = Date.now();
    const lapsesAt = killedAt + 3_000;
    expect(await board.claimSlot(1, killedAt, lapsesAt)).toBeDefined();
    expect(await leases.acquireLease(target, 'killed', killedAt, lapsesAt)).toBe(true);

    // Asked before the lapse by its own clock: on a loaded machine the writes above can outlast it.
    const graceMs = config.tuning.requestGraceMs;
    const beforeLapse = workRequester({ board, trigger, graceMs, now: () => lapsesAt - 1 });
    expect(await beforeLapse([target])).toBe('queued');
    const startedAt = await eventually(
      async () => ((await requestWork([target])) === 'started' ? Date.now() : undefined),
      'a request to start an execution once the killed one lapsed',
      30_000,
    );
    expect(startedAt).toBeGreaterThanOrEqual(lapsesAt);
    await trigger.idle();
    expect(await f.depth(target)).toBe(10);
  });

  scenario('a target whose moves failed gets a due time, and the same execution moves it then', async (f) => {
    await f.declare(target, { 'x-max-length': maxLength });
    await f.record(target, [`${target}»/a`]);
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
    const { trigger, requestWork, watch } = onDemand(f, {}, { openChannel });
    expect(await requestWork([target])).toBe('started');
    await trigger.idle();
    expect(await f.depth(target)).toBe(10);
    const [execution] = watch.executions;
    const first = execution!.summaries[0]!.targets[0]!;
    expect(first.moved).toBe(0);
    expect(first.dueInMs).toBeGreaterThan(0);
    expect(watch.started).toBe(1);
  });

  scenario(
    'the schedule lists at most once per interval: it records a queue made elsewhere and its lost work is moved',
    async (f) => {
      await f.declare(target, { 'x-max-length': maxLength });
      // Made without the router: the registry does not know it, and no request was made.
      await f.declare(`${target}»/elsewhere`);
      await f.publish(`${target}»/elsewhere`, 7, 'e');
      await f.listed([`${target}»/elsewhere`]);
      const { watch, run } = onDemand(f);

      const first = await run(undefined, 60_000);
      expect(watch.listings).toBe(1);
      expect((await f.registry.queuesOf(target)).map((r) => r.queue)).toEqual([`${target}»/elsewhere`]);
      expect(first.moved).toBe(7);
      // The next minute's schedule, a few seconds later, and another container's: no listing.
      await run(undefined, 60_000);
      await run(undefined, 60_000);
      expect(watch.listings).toBe(1);
      expect(await f.depth(target)).toBe(7);
    },
  );

  scenario('a pass request of the earlier run model is served as work', async (f) => {
    await f.stage(target, { 'x-max-length': maxLength }, { [`${target}»/a`]: 4 });
    const { run, watch } = onDemand(f);
    const execution = await run(
      { source: 'fairway.pass-request', requestId: 'queued-before-deploy', target, delayMs: 1_000 },
      60_000,
    );
    expect(execution.moved).toBe(4);
    expect(watch.listings).toBe(0);
  });
});
