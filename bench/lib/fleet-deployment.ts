import { AsyncLocalStorage } from 'node:async_hooks';
import type { ScheduledEvent } from 'aws-lambda';
import { loadDistributorConfig } from '../../lib/distributor/config';
import type { ExecutionSummary, PassSummary } from '../../lib/distributor/report';
import { loadRouterConfig } from '../../lib/routing/config';
import { stagingArguments as routerStagingArguments } from '../../lib/routing/staging-queues';
import { createDistributorService, distributorInvocation, warningReport } from '../../lib/wiring/distributor';
import { createRouterService } from '../../lib/wiring/router';
import { checkVariableNames } from '../../lib/wiring/variables';
import type { DistributorEvent } from '../../lib/work-board/pass-trigger';
import { lambdaContext, scheduledEvent, sqsEvent } from '../../local/lambda-events';
import { startLambdaInvokeServer } from '../../local/lambda-invoke-server';
import { serviceFunctions } from '../../local/service';
import { Scheduler } from '../../local/stack/scheduler';
import { asDeployedDistributorEnv } from './fairway-deploy';
import { gbSeconds, InFlight, isVhostListing } from './fleet-metrics';
import { callerEndpoint } from './hops';
import type { BenchVhost } from './services';

/**
 * The one file of the fleet bench that knows how Fairway is put together (its public entry points:
 * the config loaders, createRouterService, createDistributorService, distributorInvocation and
 * serverless.yml's functions), so that a change to the run model is adapted here alone.
 *
 * As deployed: the router's and the distributor's handler cores (no logging middlewares), one
 * container each (one service, concurrent invocations sharing it); the distributor on its
 * serverless.yml schedule and started on demand through the real Lambda client against a local
 * async-invoke endpoint; management API requests counted by caller with the services' `fetch`
 * option; DynamoDB requests counted by the server, the router's and the distributor's apart.
 */

/** serverless.yml's provider memorySize: what every function is billed at. */
export const MEMORY_MB = 512;
const FUNCTION_NAME = 'fairway-bench-distributor';

export type Caller = 'router' | 'distributor, scheduled' | 'distributor, on demand' | 'distributor, outside a run';

/** Management API requests by caller: all of them, and vhost listings. */
export class ManagementCounts {
  readonly requests = new Map<Caller, number>();
  readonly listings = new Map<Caller, number>();

  constructor(private readonly vhost: string) {}

  fetchFor(caller: () => Caller): typeof fetch {
    return (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      const who = caller();
      this.requests.set(who, (this.requests.get(who) ?? 0) + 1);
      if (isVhostListing(url, this.vhost)) this.listings.set(who, (this.listings.get(who) ?? 0) + 1);
      return fetch(input, init);
    };
  }

  total(map: Map<Caller, number>, prefix = ''): number {
    return [...map].filter(([who]) => who.startsWith(prefix)).reduce((sum, [, n]) => sum + n, 0);
  }

  reset() {
    this.requests.clear();
    this.listings.clear();
  }
}

/** One function's Lambda usage: invocations and their billed GB-s. */
export class LambdaUsage {
  invocations = 0;
  gbSeconds = 0;
  /** By kind (the distributor's scheduled and on-demand invocations). */
  readonly byKind = new Map<string, number>();

  async time<T>(kind: string, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    this.invocations++;
    this.byKind.set(kind, (this.byKind.get(kind) ?? 0) + 1);
    try {
      return await work();
    } finally {
      this.gbSeconds += gbSeconds(performance.now() - started, MEMORY_MB);
    }
  }

  reset() {
    this.invocations = 0;
    this.gbSeconds = 0;
    this.byKind.clear();
  }
}

export interface FleetOptions {
  /** AMQP and management URLs as the functions reach them (through the delay proxy). */
  vhost: BenchVhost;
  /** The bench DynamoDB's endpoint (through the delay proxy); callers get a path of their own. */
  dynamoEndpoint: string;
  /** Passes on the schedule (a first one at deploy, as the local stack runs it). */
  schedule: boolean;
  /** Passes on demand (the router's requests and the distributor's follow-ups), as deployed; off, the schedule alone. */
  onDemand?: boolean;
  /**
   * 'skip': the async-invoke endpoint accepts the invocations and runs no pass, so the router asks for
   * passes (and writes their marks) as deployed while nothing moves (its DynamoDB writes, apart).
   */
  passes?: 'run' | 'skip';
  /** Settings on top of the bench's, as flood's `--router-env` and `--distributor-env` give them (checked as at cold start). */
  routerEnv?: Record<string, string>;
  distributorEnv?: Record<string, string>;
  /** Router invocations the bench runs at once at most: the distributor's DIRECT_ROUTING carries it, as deployed. */
  routers: number;
  progress: (line: string) => void;
}

export type FleetDeployment = Awaited<ReturnType<typeof deployFleet>>;

export async function deployFleet(options: FleetOptions) {
  const { vhost, progress } = options;
  const routerEnv = options.routerEnv ?? {};
  const distributorEnv = asDeployedDistributorEnv({ env: options.distributorEnv ?? {}, routers: options.routers });
  // As at cold start: a misspelled setting is refused, not ignored.
  checkVariableNames({ ...routerEnv, ...distributorEnv });
  const distributorFn = serviceFunctions('dev').find((fn) => fn.name === 'distributor')!;
  const caller = new AsyncLocalStorage<Caller>();
  const management = new ManagementCounts(vhost.vhost);
  const router = new LambdaUsage();
  const distributor = new LambdaUsage();
  const inFlight = new InFlight();
  let failed = 0;
  /** Distributor time spent before its pass began (a follow-up's delay, waited inside the invocation). */
  let waitedMs = 0;
  /** The executions that ended since the last reset: how each ended, its rounds and its time. */
  let executions: Pick<
    ExecutionSummary,
    'ending' | 'rounds' | 'targetPasses' | 'durationMs' | 'waitedMs' | 'grants' | 'revocations'
  >[] = [];
  /** Router records reported failed (the first few are logged). */
  let notRouted = 0;
  /** The router's metrics (Routed, RoutedDirect, …) since the last reset. */
  const routerCounts = new Map<string, number>();

  let run: (event: ScheduledEvent | DistributorEvent) => Promise<ExecutionSummary>;
  const invokeServer = await startLambdaInvokeServer(
    (_name, event) => (options.passes === 'skip' ? Promise.resolve() : run(event as DistributorEvent)),
    (error) => {
      failed++;
      progress(`distributor invocation failed: ${String(error)}`);
    },
  );
  const common = {
    AMQP_URL: vhost.amqpUrl,
    RABBITMQ_MANAGEMENT_URL: vhost.managementUrl,
    RABBITMQ_VHOST: vhost.vhost,
    TENANT_TABLE: 'TenantCountersTable',
    DISTRIBUTOR_TABLE: 'DistributorStateTable',
    // As deployed: routers record their staging queues, passes read them there, the backstop lists once a minute.
    STAGING_TABLE: 'StagingQueuesTable',
    ...(options.onDemand === false
      ? {}
      : { DISTRIBUTOR_FUNCTION_NAME: FUNCTION_NAME, LAMBDA_ENDPOINT: invokeServer.endpoint }),
  };
  // Each warning's first few go to the progress lines; all are counted (a pass over 200 targets can warn 200 times).
  const warnings = new Map<string, number>();
  let stopping = false;
  const warn = warningReport((message, details) => {
    const seen = (warnings.get(message) ?? 0) + 1;
    warnings.set(message, seen);
    // Follow-ups asked for while the bench stops the endpoint are expected; they are counted, not shown.
    if (seen <= 3 && !stopping) progress(`distributor: ${message} ${JSON.stringify(details).slice(0, 300)}`);
  });
  const distributorConfig = loadDistributorConfig({
    ...common,
    DYNAMODB_ENDPOINT: callerEndpoint(options.dynamoEndpoint, 'distributor'),
    ...distributorEnv,
  });
  const distributorService = createDistributorService(distributorConfig, warn, {
    fetch: management.fetchFor(() => caller.getStore() ?? 'distributor, outside a run'),
  });
  const invocation = distributorInvocation(distributorService);
  run = (event) => {
    const kind: Caller =
      (event as { source?: string }).source !== 'aws.events' ? 'distributor, on demand' : 'distributor, scheduled';
    return caller.run(kind, () =>
      distributor.time(kind, async () => {
        inFlight.started();
        try {
          const execution = await invocation(
            event,
            lambdaContext(distributorFn.deployedName, distributorFn.timeoutSeconds),
          );
          waitedMs += execution.waitedMs;
          const { ending, rounds, targetPasses, durationMs, grants, revocations } = execution;
          executions.push({
            ending,
            rounds,
            targetPasses,
            durationMs,
            waitedMs: execution.waitedMs,
            grants,
            revocations,
          });
          return execution;
        } finally {
          inFlight.ended();
        }
      }),
    );
  };
  const routerConfig = loadRouterConfig({
    ...common,
    DYNAMODB_ENDPOINT: callerEndpoint(options.dynamoEndpoint, 'router'),
    ...routerEnv,
  });
  const routerService = createRouterService(
    routerConfig,
    {
      failed: (failure) => {
        notRouted++;
        if (notRouted <= 5) progress(`router: not routed ${failure.kind} ${failure.reason}`);
      },
      counted: (metric, count) => routerCounts.set(metric, (routerCounts.get(metric) ?? 0) + count),
      tenantRouted: () => undefined,
      stagingQueueKept: (kept) =>
        progress(`router: staging queue kept with arguments unlike its target ${JSON.stringify(kept)}`),
      tenantlessRouted: () => undefined,
      nameShortened: () => undefined,
      passRequestFailed: (target, error) => progress(`router: pass request failed for ${target}: ${String(error)}`),
      directRoutingUnread: (error) => progress(`router: direct-routing grants or depths unread: ${String(error)}`),
    },
    { fetch: management.fetchFor(() => 'router') },
  );
  const scheduler = new Scheduler([distributorFn], 1, () =>
    run(scheduledEvent(`${distributorFn.deployedName}-schedule`)),
  );
  if (options.schedule) scheduler.start();

  return {
    /** The router's configuration as its cold start read it. */
    routerConfig,
    management,
    router,
    distributor,
    inFlight,
    /** The distributor's warnings by message, since deploy. */
    warnings,
    failedInvocations: () => failed,
    /** Seconds of the distributor's billed time spent waiting before its passes, since the last reset. */
    waitedSeconds: () => waitedMs / 1000,
    notRouted: () => notRouted,
    /** The distributor executions that ended since the last reset. */
    executions: () => executions,
    routerCounts,
    /** One router invocation: an SQS batch of after-process event bodies. */
    route: (bodies: readonly string[]) =>
      caller.run('router', () =>
        router.time('batch', () => routerService.route(sqsEvent(bodies, 'fairway-bench-after-process'))),
      ),
    /** One scheduled invocation, as EventBridge starts it. */
    /** One scheduled invocation, its rounds' passes as one: every target it served, with what each moved. */
    scheduledPass: async (): Promise<Pick<PassSummary, 'targets' | 'moved'>> => {
      const execution = await run(scheduledEvent(`${distributorFn.deployedName}-schedule`));
      return { targets: execution.summaries.flatMap((s) => s.targets), moved: execution.moved };
    },
    /** Starts a new measuring window for the Lambda and management counts. */
    reset() {
      management.reset();
      router.reset();
      distributor.reset();
      inFlight.reset();
      routerCounts.clear();
      waitedMs = 0;
      executions = [];
    },
    async stop() {
      stopping = true;
      await scheduler.stop();
      await invokeServer.close();
      await Promise.all([routerService.close(), distributorService.close()]);
    },
  };
}

/** An after-process event body for `tenantId`'s document to `target` (message id → for its wait). */
export function afterProcessBody(target: string, tenantId: string, messageId: string, body = '{"task":"bench"}') {
  return JSON.stringify({
    target,
    tenantId,
    workflowName: 'flow',
    message: { body, properties: { messageId, contentType: 'application/json' } },
  });
}

/**
 * A staging queue's arguments as the router declares it for a classic target declared with
 * `targetArguments` (the router names the type the management API reports), so that queues the
 * bench declares ahead are the router's own, not kept with other arguments.
 */
export const stagingArguments = (targetArguments: Record<string, unknown>) =>
  routerStagingArguments({ ...targetArguments, 'x-queue-type': 'classic' });

/** The staging queue the router stages `tenantId`'s events to `target` in. */
export { stagingQueueName } from '../../lib/staging/staging-names';
