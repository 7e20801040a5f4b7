import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Context } from 'aws-lambda';
import { ConfigError } from '../../../lib/platform/errors';
import { managementPath } from '../../../lib/rabbitmq/management';
import { readyCountsOn } from '../../../lib/rabbitmq/ready-counts';
import { loadRouterConfig } from '../../../lib/routing/config';
import { openDoorbell } from '../../../lib/staging/doorbell';
import { distributorFunction } from '../../../lib/wiring/distributor';
import { lambdaFunction } from '../../../lib/wiring/lambda-function';
import { routerFunction } from '../../../lib/wiring/router';
import { managementApi } from '../../../local/management-api';
import type { Vhost } from '../../../local/vhost';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';
import { eventually } from '../../harness/eventually';
import { holdOwnNode } from '../../harness/own-node-holds';
import { refusedBy43 } from '../../harness/rabbitmq-4-rules';
import { type RecordedCall, recordBrokerCalls } from '../../harness/rabbitmq-call-recorder';
import { tlsServices } from '../../harness/services';
import { createOwnNodeVhost } from '../../harness/tls';
import { afterProcessEvent } from './fixture';

holdOwnNode('shared');

const root = join(__dirname, '..', '..', '..');
const context = { functionName: 'audit', awsRequestId: 'audit', getRemainingTimeInMillis: () => 30_000 } as Context;
const MOVER = 'fairway_audit_mover';

/** Every line of lib/ that sends a queue declare or a qos: `lib/<file>:<line>`. */
function declareAndQosSites(dir = join(root, 'lib')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return declareAndQosSites(path);
    if (!entry.name.endsWith('.ts')) return [];
    return readFileSync(path, 'utf8')
      .split('\n')
      .flatMap((line, i) =>
        /\.(assertQueue|checkQueue|prefetch|qos)\(/.test(line) ? [`${relative(root, path)}:${i + 1}`] : [],
      );
  });
}

// RabbitMQ 4 rules (issue 26): records every queue.declare and basic.qos Fairway sends during
// representative router and distributor runs, on the tests' own RabbitMQ 3.10 node, and fails on
// any that RabbitMQ 4.3 refuses (test/harness/rabbitmq-4-rules.ts), and on any declare or qos call
// site in lib/ that no run below exercised: a new one needs a run here.
describe('RabbitMQ 4 audit: every queue declare and qos call Fairway makes', () => {
  let rabbit: Vhost;
  let dynamo: EmbeddedDynamo;
  let recorded: RecordedCall[];

  beforeAll(async () => {
    [rabbit, dynamo] = await Promise.all([createOwnNodeVhost(), startDynamo()]);
    await dynamo.createTables();
    const api = managementApi(tlsServices.plainManagementUrl);
    await api('PUT', managementPath('api', 'users', MOVER), { password: 'audit-pw', tags: '' });
    await api('PUT', managementPath('api', 'permissions', rabbit.vhost, MOVER), {
      configure: '.*',
      write: '.*',
      read: '.*',
    });
    const { connect } = await import('amqplib');
    const setup = await connect(rabbit.amqpUrl);
    const channel = await setup.createConfirmChannel();
    await channel.assertQueue('classic-target', { durable: true, arguments: { 'x-max-priority': 10 } });
    await channel.assertQueue('quorum-target', { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    // Arguments 3.13 accepted that a queue keeps across the upgrades to 4.3, which refuses them in a declare.
    await channel.assertQueue('upgraded-target', {
      durable: true,
      arguments: {
        'x-max-priority': 10,
        'x-queue-mode': 'lazy',
        'x-queue-version': 1,
        'x-queue-master-locator': 'min-masters',
      },
    });
    // A staging queue that exists with other arguments: its refusal closes the shared declare channel.
    await channel.assertQueue('classic-target»/kept', { durable: true });
    // Staged by hand for the distributor: a target it must create, and a message it must park.
    await channel.assertQueue('created-target»/t1', { durable: true });
    channel.sendToQueue('created-target»/t1', Buffer.from('x'), { persistent: true });
    // More than the distributor takes by basic.get (GET_SHARE_MAX), so it consumes with a prefetch.
    await channel.assertQueue('classic-target»/foreign', { durable: true, arguments: { 'x-max-priority': 10 } });
    for (const userId of [undefined, undefined, 'guest', undefined, undefined])
      channel.sendToQueue('classic-target»/foreign', Buffer.from('x'), { persistent: true, userId });
    await channel.waitForConfirms();
    await setup.close();

    const env = { ...functionEnv(rabbit, dynamo), DISTRIBUTOR_TABLE: 'DistributorStateTable' };
    process.env.AWS_ACCESS_KEY_ID ??= 'local';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
    recorded = await recordBrokerCalls(async () => {
      const router = lambdaFunction(routerFunction, env);
      try {
        const routed = await router(
          afterProcessEvent([
            ['classic-target', 'kept', 'k'],
            ['classic-target', 't1', 'a'],
            ['classic-target', 'foreign', 'f'],
            ['quorum-target', 't1', 'b'],
            ['quorum-target', 't2', 'c'],
            ['upgraded-target', 't1', 'd'],
          ]),
          context,
        );
        expect(routed).toEqual({ batchItemFailures: [] });
      } finally {
        await router.close();
      }
      await eventually(async () => {
        const queues = await rabbit.api<{ name: string; messages_ready?: number }[]>(
          'GET',
          `/api/queues/${encodeURIComponent(rabbit.vhost)}?columns=name,messages_ready`,
        );
        return queues.filter((q) => q.name.includes('»/') && (q.messages_ready ?? 0) > 0).length >= 7 || undefined;
      }, 'the listing to show the staged messages');
      // The distributor as a user of its own, so that the message published as guest must be parked.
      const url = new URL(rabbit.amqpUrl);
      url.username = MOVER;
      url.password = 'audit-pw';
      const distributor = lambdaFunction(distributorFunction, {
        ...env,
        AMQP_URL: url.toString(),
        DISTRIBUTOR_MISSING_TARGET: 'create',
        // No workers drain these targets: with the buffer, each would take only its start depth (5)
        // of the 7 staged for classic-target, and the message to park could be left behind.
        DISTRIBUTOR_BUFFER_HORIZON_MS: '0',
      });
      try {
        expect(await distributor({} as never, context)).toMatchObject({ moved: 11, parked: 1 });
      } finally {
        await distributor.close();
      }
      // A busy target's refills read its depth on one kept channel (target-pass.ts); no worker drains
      // the targets here, so that read is made directly, as a refill makes it.
      const model = await connect(rabbit.amqpUrl);
      try {
        const depths = await model.createConfirmChannel();
        expect((await readyCountsOn(depths, ['classic-target'])).get('classic-target')).toBeGreaterThan(0);
        await depths.close();
        // So is the target's doorbell, which a busy stint declares (target-pass.ts).
        const doorbell = await openDoorbell(await model.createChannel(), 'classic-target');
        expect(await doorbell?.rung()).toEqual([]);
        await doorbell?.close();
      } finally {
        await model.close();
      }
    });
  }, 60_000);
  afterAll(async () => {
    await managementApi(tlsServices.plainManagementUrl)('DELETE', managementPath('api', 'users', MOVER)).catch(
      () => undefined,
    );
    await Promise.all([rabbit?.delete(), dynamo?.stop()]);
  });

  it('sends nothing RabbitMQ 4.3 refuses', () => {
    const refused = recorded
      .map(({ call, site }) => ({ site, call, reasons: refusedBy43(call) }))
      .filter((entry) => entry.reasons.length > 0);
    expect(refused).toEqual([]);
  });

  it('exercised every declare and qos call site in lib/', () => {
    const seen = new Set(recorded.map((entry) => entry.site));
    expect(declareAndQosSites().filter((site) => !seen.has(site))).toEqual([]);
  });
});

// The shapes ROUTER_TARGETS can give staging queues (the router declares them without asking the
// broker): each is refused at cold start, naming ROUTER_TARGETS, or declares only what 4.3 accepts.
describe('RabbitMQ 4 audit: staging queue shapes from ROUTER_TARGETS', () => {
  let rabbit: Vhost;
  let dynamo: EmbeddedDynamo;
  beforeAll(async () => {
    [rabbit, dynamo] = await Promise.all([createOwnNodeVhost(), startDynamo()]);
    await dynamo.createTables();
    process.env.AWS_ACCESS_KEY_ID ??= 'local';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
  });
  afterAll(() => Promise.all([rabbit?.delete(), dynamo?.stop()]));

  it.each([
    ['transient', { durable: false }],
    ['durable, by default', { arguments: { 'x-max-priority': 10 } }],
    ['upgraded from 3.13', { durable: true, arguments: { 'x-queue-mode': 'lazy', 'x-queue-version': 1 } }],
    ['quorum', { arguments: { 'x-queue-type': 'quorum' } }],
  ])('%s: refused at cold start, or declared as 4.3 accepts', async (name, shape) => {
    const target = `configured-${name.replace(/\W+/g, '-')}`;
    const env = { ...functionEnv(rabbit, dynamo), ROUTER_TARGETS: JSON.stringify({ [target]: shape }) };
    try {
      loadRouterConfig(env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems.join()).toMatch(/^ROUTER_TARGETS: /);
      return;
    }
    const recorded = await recordBrokerCalls(async () => {
      const router = lambdaFunction(routerFunction, env);
      try {
        expect(await router(afterProcessEvent([[target, 't1', 'x']]), context)).toEqual({ batchItemFailures: [] });
      } finally {
        await router.close();
      }
    });
    expect(recorded.length).toBeGreaterThan(0);
    expect(
      recorded.map(({ call, site }) => ({ site, reasons: refusedBy43(call) })).filter((r) => r.reasons.length),
    ).toEqual([]);
  });
});

/** The router's and the distributor's settings for the audit's vhost and dynalite. */
function functionEnv(rabbit: Vhost, dynamo: EmbeddedDynamo) {
  return {
    AMQP_URL: rabbit.amqpUrl,
    RABBITMQ_MANAGEMENT_URL: rabbit.managementUrl,
    RABBITMQ_VHOST: rabbit.vhost,
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    AWS_REGION: 'us-east-1',
    TENANT_TABLE: 'TenantCountersTable',
  };
}
