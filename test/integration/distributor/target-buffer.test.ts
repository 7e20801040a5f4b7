import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type Channel, type ChannelModel, connect } from 'amqplib';
import { START_DEPTH } from '../../../lib/distributor/planning/capacity';
import { ManagementClient } from '../../../lib/rabbitmq/management';
import { CachedStagingQueues } from '../../../lib/routing/staging-queues';
import { buildDistributor, warningReport } from '../../../lib/wiring/distributor';
import { eventually } from '../../harness/eventually';
import { type DistributorFixture, scenario, tally } from './fixture';

const target = 'work';
const staging = `${target}»/a`;

/** The fixture's distributor with the buffer on, over a document client that counts its DynamoDB requests. */
function counted(f: DistributorFixture, env: Record<string, string> = {}) {
  const management = new ManagementClient(f.rabbit.managementUrl, f.rabbit.vhost);
  const requests = { count: 0 };
  const doc = new Proxy(f.dynamo.doc, {
    get(client, property, receiver) {
      if (property !== 'send') return Reflect.get(client, property, receiver);
      return (command: Parameters<DynamoDBDocumentClient['send']>[0]) => {
        requests.count++;
        return client.send(command);
      };
    },
  });
  const distributor = buildDistributor(
    f.config({ DISTRIBUTOR_BUFFER_HORIZON_MS: '250', ...env }, { idleStopMs: 200 }),
    {
      openChannel: () => f.session.openConfirmChannel(),
      listQueues: () => management.listQueues(),
      getQueue: (name) => management.getQueue(name),
      listPolicies: () => management.listPolicies(),
      doc,
      consumptionRate: async () => undefined,
    },
    warningReport((message, details) => f.warnings.push({ message, details })),
  );
  return { distributor, requests };
}

/** Workers on the target: each message held `holdMs` then acked, `prefetch` at a time; their ids kept. */
async function workers(f: DistributorFixture, prefetch: number, holdMs: number) {
  const model: ChannelModel = await connect(f.rabbit.amqpUrl);
  const channel: Channel = await model.createChannel();
  await channel.prefetch(prefetch);
  const ids: string[] = [];
  let stopped = false;
  await channel.consume(target, (message) => {
    if (!message) return;
    ids.push(String(message.properties.messageId));
    setTimeout(() => stopped || channel.ack(message), holdMs);
  });
  return {
    ids,
    async stop() {
      stopped = true;
      await model.close();
    },
  };
}

/** The target's ready depth every few ms until stopped: the largest seen. */
function sampleDepth(f: DistributorFixture) {
  let sampling = true;
  let largest = 0;
  const done = f.withChannel(async (channel) => {
    while (sampling) {
      largest = Math.max(largest, (await channel.checkQueue(target)).messageCount);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  });
  return async () => {
    sampling = false;
    await done;
    return largest;
  };
}

describe('the target buffer (real RabbitMQ, dynalite)', () => {
  scenario('an empty target with no drain measured yet gets a shallow first fill, not its max length', async (f) => {
    await f.stage(target, { 'x-max-length': 1000 }, { [staging]: 500 });
    const { distributor } = counted(f);
    const pass = await distributor.runPass(60_000);
    // No workers: nothing drains, so the pass does not stay to refill it, nor is it due at once.
    expect(pass.targets[0]).toMatchObject({ moved: START_DEPTH, maxLength: START_DEPTH });
    expect(pass.targets[0]!.busy).toBeUndefined();
    expect(await f.depth(target)).toBe(START_DEPTH);
    expect(await f.depth(staging)).toBe(500 - START_DEPTH);
  });

  scenario(
    'while workers drain it, one pass tops the target up at their pace, far below its max length, with no DynamoDB request per refill',
    async (f) => {
      await f.stage(target, { 'x-max-length': 1000 }, { [staging]: 2000 });
      const { distributor, requests } = counted(f);
      const busy = await workers(f, 10, 10);
      const largest = sampleDepth(f);
      const pass = await distributor.runPass(60_000);
      const depthSeen = await largest();
      await busy.stop();
      const moved = pass.targets[0]!;
      expect(moved.refills).toBeGreaterThanOrEqual(10);
      expect(moved.moved).toBeGreaterThan(START_DEPTH);
      expect(moved.busy).toBe(true);
      // Filling to the max length would put 1000 in at once.
      expect(depthSeen).toBeLessThan(500);
      // The lease, the rotation, the controls and the waits: a handful for the pass, none per refill.
      expect(requests.count).toBeLessThanOrEqual(8);
      const { unique, duplicates } = tally([...busy.ids, ...(await f.drain(target)), ...(await f.drain(staging))]);
      // Only what the workers held unacked when they stopped comes back (requeued) a second time.
      expect(duplicates).toBeLessThanOrEqual(10);
      expect(unique.size).toBe(2000);
    },
  );

  scenario(
    "a staging queue the router declares while an execution refills the target is served within that stint (the target's doorbell), nothing lost, no overfill",
    async (f) => {
      await f.stage(target, { 'x-max-length': 1000 }, { [staging]: 5000 });
      const { distributor, requests } = counted(f);
      // About 1,000 a second: the noisy backlog outlasts the stint (REFILL_STINT_MS).
      const busy = await workers(f, 10, 10);
      const largest = sampleDepth(f);
      let passEnded = false;
      const running = distributor.runPass(60_000).finally(() => {
        passEnded = true;
      });
      // The stint is refilling (a refill after the first moved): the new queue appears now.
      await eventually(async () => busy.ids.length > START_DEPTH + 20 || undefined, 'a refill after the first', 30_000);
      expect(passEnded).toBe(false);
      const router = new CachedStagingQueues(
        f.session,
        new ManagementClient(f.rabbit.managementUrl, f.rabbit.vhost),
        {},
        60_000,
        { stagingQueueKept: () => undefined },
      );
      const quiet = `${target}»/quiet`;
      await router.ensure(quiet, target);
      await f.publish(quiet, 1, 'quiet');
      const pass = await running;
      const depthSeen = await largest();
      await busy.stop();
      // The pass took its staging queues before the quiet one existed: only a ring could bring it in.
      expect(pass.targets[0]!.queues.find((q) => q.name === quiet)).toMatchObject({ moved: 1 });
      expect(busy.ids).toContain('quiet-0');
      // The doorbell is read over AMQP: the pass's handful of DynamoDB requests, none per refill.
      expect(requests.count).toBeLessThanOrEqual(8);
      expect(depthSeen).toBeLessThanOrEqual(1000);
      const rest = [...(await f.drain(target)), ...(await f.drain(staging)), ...(await f.drain(quiet))];
      expect(tally([...busy.ids, ...rest]).unique.size).toBe(5001);
    },
  );

  scenario('a target whose buffer is turned off is filled to its max length (a throughput-only queue)', async (f) => {
    await f.stage(target, { 'x-max-length': 1000 }, { [staging]: 2000 });
    const { distributor } = counted(f, { DISTRIBUTOR_TARGETS: JSON.stringify({ [target]: { buffer: false } }) });
    const pass = await distributor.runPass(60_000);
    expect(pass.targets[0]).toMatchObject({ moved: 1000, maxLength: 1000, refills: 1 });
  });
});
