import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connect } from 'amqplib';
import { createCleanupOperator } from '../lib/cleanup/operator';
import { ManagementClient } from '../lib/rabbitmq/management';
import { loadHandler } from './functions';
import { lambdaContext, scheduledEvent } from './lambda-events';
import { startDynamo } from './embedded-dynamo';
import { loadQueueSettings } from './ops/queues';
import { loadTenantSettings } from './ops/tenants';
import { projectRoot } from './paths';
import { serviceFunctions, type ServiceFunction } from './service';
import { createDemoVhost } from './stack/demo-vhost';
import { DemoRegistry } from './stack/demo-registry';
import { functionEnvironment } from './stack/environment';
import { Scheduler } from './stack/scheduler';
import { takeSnapshot, type Snapshot } from './stack/snapshot';
import { demoTenants, TrafficGenerator } from './stack/traffic';
import { ansi, renderView } from './stack/view';
import { SimulatedWorker } from './stack/worker';

/**
 * `npm start`: the whole system on this machine, as it runs on AWS. Embedded DynamoDB and
 * PostgreSQL, a RabbitMQ vhost of its own, the real handlers invoked with AWS-shaped events on
 * serverless.yml's schedules (sped up), a traffic generator, a live view. `--headless --duration s`
 * runs for a bounded time and prints the final state as JSON (the acceptance test uses it).
 */
const { values: flags } = parseArgs({
  options: {
    speed: { type: 'string', default: '300' },
    headless: { type: 'boolean', default: false },
    duration: { type: 'string' },
    stage: { type: 'string', default: 'dev' },
    log: { type: 'string', default: join(projectRoot(), 'fairway-local.log') },
  },
});
const speed = Number(flags.speed);
const duration = flags.duration === undefined ? undefined : Number(flags.duration);
if (!(speed >= 1)) fail('--speed must be a number ≥ 1 (how many times faster than real time the schedules run)');
if (duration !== undefined && !(duration > 0)) fail('--duration must be a positive number of seconds');

const target = 'worker-input';
const minimumRunMs = 20_000;
const out = process.stdout.write.bind(process.stdout);
const cleanups: Array<() => Promise<unknown>> = [];
let stopping: Promise<void> | undefined;

function fail(message: string): never {
  process.stderr.write(`npm start: ${message}\n`);
  process.exit(2);
}

async function main() {
  const startedAt = Date.now();
  const amqpUrl = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
  const managementUrl = process.env.RABBITMQ_MANAGEMENT_URL ?? 'http://guest:guest@127.0.0.1:15672';
  const vhost = await createDemoVhost(amqpUrl, managementUrl, `fairway-demo-${process.pid}`);
  cleanups.push(() => vhost.delete());
  const [dynamo, registry] = await Promise.all([startDynamo(), DemoRegistry.start()]);
  cleanups.push(() => dynamo.stop(), () => registry.stop());
  await dynamo.createTables();

  const env = functionEnvironment(
    { dynamoEndpoint: dynamo.endpoint, amqpUrl: vhost.amqpUrl, managementUrl, vhost: vhost.vhost, ...registry.urls },
    speed,
    registry.documentTypes,
  );
  Object.assign(process.env, env);

  // The functions log to stdout as in Lambda; here their lines go to the log file, the view to the terminal.
  const log = createWriteStream(String(flags.log), { flags: 'w' });
  const toLog = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    log.write(chunk);
    const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    done?.();
    return true;
  }) as typeof process.stdout.write;
  process.stdout.write = toLog;
  process.stderr.write = toLog;
  cleanups.push(() => new Promise((resolve) => log.end(resolve)));

  // The target queue a document worker reads: priorities on (SPEC §1), bounded so that the
  // distributor's fair share decides who gets in.
  const connection = await connect(vhost.amqpUrl);
  const setup = await connection.createChannel();
  await setup.assertQueue(target, { durable: true, arguments: { 'x-max-priority': 9, 'x-max-length': 60 } });
  await connection.close();
  const worker = new SimulatedWorker(vhost.amqpUrl, target, 15);
  worker.start();
  cleanups.push(() => worker.stop());

  const functions = serviceFunctions(String(flags.stage));
  const router = await loadHandler('router');
  const routerFn = functions.find((f) => f.name === 'router')!;
  const tenantSettings = loadTenantSettings(env);
  const traffic = new TrafficGenerator(
    demoTenants(target, tenantSettings.rules.resetIntervalMs),
    (event) => router(event, lambdaContext(routerFn.deployedName, routerFn.timeoutSeconds)) as never,
    `fairway-${flags.stage}-after-process`,
  );

  const fills = new Map<string, number>();
  const invoke = async (fn: ServiceFunction) => {
    const handler = await loadHandler(fn.name as never);
    const result = (await handler(scheduledEvent(`${fn.deployedName}-schedule`), lambdaContext(fn.deployedName, fn.timeoutSeconds))) as
      | { job?: string; fill?: boolean }
      | undefined;
    if (result?.fill && result.job) fills.set(result.job, (fills.get(result.job) ?? 0) + 1);
    return result;
  };
  const scheduler = new Scheduler(functions, speed, invoke);
  cleanups.push(() => scheduler.stop(), () => traffic.stop());
  traffic.start();
  scheduler.start();

  const doc = dynamo.doc;
  const sources = {
    speed,
    startedAt,
    doc,
    rules: tenantSettings.rules,
    management: new ManagementClient(managementUrl, vhost.vhost),
    queueSettings: loadQueueSettings(env),
    operator: createCleanupOperator(doc, 'CleanupStackTable'),
    registry,
    traffic: traffic.traffic,
    processed: worker.processed,
    schedules: scheduler.stats,
    fills,
  };
  const notes = [
    `RabbitMQ vhost ${vhost.vhost} (deleted on exit); function logs and EMF metrics: ${flags.log}`,
    `Operate it from another terminal: ${operatorEnv(env)} npx fairway tenants|queues|stack`,
  ];

  if (flags.headless) {
    // Runs until the end states hold (or --duration is up), then prints the final state.
    const deadline = startedAt + (duration ?? 120) * 1000;
    let settled = false;
    while (!settled && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      settled = isSettled(await takeSnapshot(sources), startedAt);
    }
    await traffic.stop();
    await scheduler.stop();
    const final = { ...(await takeSnapshot(sources)), settled, uncaughtErrors: uncaught.count };
    await stop(0, () => out(`${JSON.stringify(final, null, 2)}\n`));
    return;
  }

  out(ansi.hideCursor + ansi.clearScreen);
  let drawing = false;
  const draw = async () => {
    if (drawing || stopping) return;
    drawing = true;
    try {
      const snapshot: Snapshot = await takeSnapshot(sources);
      const errors = uncaught.count ? [`uncaught errors: ${uncaught.count} (last: ${uncaught.last.slice(0, 100)})`] : [];
      if (!stopping) out(ansi.home + ansi.eraseLineEnds(renderView(snapshot, [...notes, ...errors])) + ansi.clearBelow);
    } catch (error) {
      if (!stopping) out(`${ansi.home}view: ${(error as Error).message}${ansi.clearBelow}`);
    } finally {
      drawing = false;
    }
  };
  const timer = setInterval(draw, 500);
  cleanups.push(async () => clearInterval(timer));
  if (duration !== undefined) setTimeout(() => void stop(0), duration * 1000);
}

/**
 * The demo's end states: every tenant served, the registry's eligible documents gone, OpenXDS
 * caught up, each stack drained (filled a second time) with no dead letters; after a minimum run
 * so that the tenants' levels reflect their traffic.
 */
function isSettled(snapshot: Snapshot, startedAt: number): boolean {
  return (
    Date.now() - startedAt >= minimumRunMs &&
    snapshot.tenants.every((t) => t.processed > 0) &&
    snapshot.registry.eligible === 0 &&
    snapshot.registry.repositoryPending === 0 &&
    snapshot.jobs.every((j) => j.fills >= 2 && j.deadLetters === 0)
  );
}

/** The variables that point the operator CLI at this local stack. */
function operatorEnv(env: Record<string, string>): string {
  return ['DYNAMODB_ENDPOINT', 'TENANT_TABLE', 'DISTRIBUTOR_TABLE', 'CLEANUP_TABLE', 'RABBITMQ_VHOST', 'TENANT_PRIORITY_RESET_SECONDS']
    .map((name) => `${name}=${env[name]}`)
    .join(' ');
}

/** Stops in reverse order of start: traffic and schedules first, then queues, servers, vhost. */
function stop(code: number, last?: () => void): Promise<void> {
  stopping ??= (async () => {
    for (const cleanup of cleanups.reverse()) {
      await cleanup().catch((error: Error) => out(`while stopping: ${error.message}\n`));
    }
    if (!flags.headless) out(`${ansi.showCursor}\nFairway local stack stopped: vhost deleted, embedded DynamoDB and PostgreSQL stopped.\n`);
    last?.();
    process.exit(code);
  })();
  return stopping;
}

// In Lambda an uncaught error ends the container and the next event gets a fresh one; here it
// would end the whole stack, so it is logged, counted in the view, and the stack goes on.
const uncaught = { count: 0, last: '' };
const recordUncaught = (error: unknown) => {
  uncaught.count++;
  uncaught.last = error instanceof Error ? error.message : String(error);
  process.stderr.write(`${JSON.stringify({ level: 'ERROR', message: 'uncaught error in the local stack', error: uncaught.last })}\n`);
};
process.on('uncaughtException', recordUncaught);
process.on('unhandledRejection', recordUncaught);
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
main().catch(async (error: Error) => {
  out(`${ansi.showCursor}npm start failed: ${error.message}\n`);
  await stop(1);
});
