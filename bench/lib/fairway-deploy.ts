import type { ScheduledEvent, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { loadDistributorConfig } from '../../lib/distributor/config';
import type { ExecutionSummary } from '../../lib/distributor/report';
import { loadRouterConfig } from '../../lib/routing/config';
import type { StagingRegistry } from '../../lib/staging/staging-registry';
import { createDistributorService, distributorInvocation, warningReport } from '../../lib/wiring/distributor';
import { createRouterService } from '../../lib/wiring/router';
import { checkVariableNames } from '../../lib/wiring/variables';
import type { DistributorEvent } from '../../lib/work-board/pass-trigger';
import { lambdaContext, scheduledEvent } from '../../local/lambda-events';
import { startLambdaInvokeServer } from '../../local/lambda-invoke-server';
import { distributorDirectRouting, serviceFunctions } from '../../local/service';
import { Scheduler } from '../../local/stack/scheduler';
import type { BenchDynamo } from './hops';
import type { BenchVhost } from './services';

/**
 * The flood and latency benches' one coupling to how Fairway is deployed and run (the run model may change
 * under it; this file follows): the router's and distributor's handler cores built from their
 * config loaders, the distributor's schedule and DIRECT_ROUTING from serverless.yml ('dev', with the
 * bench's router count; the fleet bench's distributor gets it here too), passes on demand through
 * the real Lambda client against a local async-invoke endpoint.
 */

const functionName = 'fairway-bench-distributor';

/** What both functions are given of the stack, as serverless.yml names and sets it, for the bench's broker and DynamoDB. */
export const stackEnv = (broker: BenchVhost, dynamo: Pick<BenchDynamo, 'endpoint'>): Record<string, string> => ({
  AMQP_URL: broker.amqpUrl,
  RABBITMQ_MANAGEMENT_URL: broker.managementUrl,
  RABBITMQ_VHOST: broker.vhost,
  DYNAMODB_ENDPOINT: dynamo.endpoint,
  TENANT_TABLE: 'TenantCountersTable',
  DISTRIBUTOR_TABLE: 'DistributorStateTable',
});

export interface Invocations {
  scheduled: number;
  requested: number;
  failed: number;
  busyMs: number;
}

export interface Deployment {
  route(event: SQSEvent): Promise<SQSBatchResponse>;
  invocations: Invocations;
  /** Stops the schedule and the invoke endpoint, waits for the invocations in flight, closes the clients. */
  stop(): Promise<void>;
}

export interface DistributorSettings {
  /** The bench's own settings, on top of those serverless.yml gives the distributor (a DIRECT_ROUTING here replaces its). */
  env: Record<string, string>;
  /**
   * Router invocations the bench runs at once at most: serverless.yml appends the router's reserved
   * concurrency to the distributor's DIRECT_ROUTING, and without it no target whose max length drops
   * is granted direct routing (docs/router.md "Direct routing").
   */
  routers: number;
}

export interface DeployOptions {
  /** Connections and tables, for both functions. */
  env: Record<string, string>;
  /** The router's own settings on top (ROUTER_TARGETS, TENANT_PRIORITY_…). */
  routerEnv: Record<string, string>;
  /** Absent: the router alone, publishing straight to the target. */
  distributor?: DistributorSettings & {
    onDemand: boolean;
    /**
     * A registry of the bench's, read instead of STAGING_TABLE's: the router then records nothing
     * (the backstop's listing does) and nothing is reaped. Absent: STAGING_TABLE, as deployed.
     */
    registry?: StagingRegistry;
  };
  progress(line: string): void;
}

/** The distributor's own settings as deployed: serverless.yml's DIRECT_ROUTING with the bench's router count, the bench's on top. */
export const asDeployedDistributorEnv = ({ env, routers }: DistributorSettings): Record<string, string> => ({
  DIRECT_ROUTING: distributorDirectRouting('dev', routers),
  ...env,
});

/** The distributor's configuration as its cold start reads it, with the stack's `env` under its own settings. */
export const distributorConfig = (env: Record<string, string>, distributor: DistributorSettings) =>
  loadDistributorConfig({ ...env, ...asDeployedDistributorEnv(distributor) });

/** Loads both configurations once, so that a bad setting fails before a run rather than minutes into it. */
export function checkSettings(
  options: Pick<DeployOptions, 'env' | 'routerEnv'> & { distributor: DistributorSettings },
) {
  const onDemand = { DISTRIBUTOR_FUNCTION_NAME: functionName, LAMBDA_ENDPOINT: 'http://127.0.0.1:9' };
  // As at cold start: a misspelled setting is refused, not ignored.
  checkVariableNames({ ...asDeployedDistributorEnv(options.distributor), ...options.routerEnv });
  distributorConfig({ ...options.env, ...onDemand }, options.distributor);
  loadRouterConfig({ ...options.env, ...onDemand, ...options.routerEnv });
}

export async function deploy(given: DeployOptions): Promise<Deployment> {
  // As deployed: the router records its staging queues and the distributor's passes read them there.
  const registry = given.distributor?.registry;
  const options = registry ? given : { ...given, env: { STAGING_TABLE: 'StagingQueuesTable', ...given.env } };
  const { progress } = options;
  const invocations: Invocations = { scheduled: 0, requested: 0, failed: 0, busyMs: 0 };
  const closers: (() => Promise<unknown>)[] = [];
  let onDemandEnv: Record<string, string> = {};

  if (options.distributor) {
    const distributorFn = serviceFunctions('dev').find((fn) => fn.name === 'distributor')!;
    let runInvocation: (event: ScheduledEvent | DistributorEvent) => Promise<ExecutionSummary> = async () => {
      throw new Error('distributor not ready');
    };
    const invokeServer = await startLambdaInvokeServer(
      async (_name, event) => {
        invocations.requested++;
        return runInvocation(event as DistributorEvent);
      },
      () => invocations.failed++,
    );
    if (options.distributor.onDemand)
      onDemandEnv = { DISTRIBUTOR_FUNCTION_NAME: functionName, LAMBDA_ENDPOINT: invokeServer.endpoint };
    const warn = warningReport((message, details) => progress(`distributor: ${message} ${JSON.stringify(details)}`));
    const config = distributorConfig({ ...options.env, ...onDemandEnv }, options.distributor);
    const service = createDistributorService(config, warn, registry ? { registry } : {});
    const invocation = distributorInvocation(service);
    runInvocation = async (event) => {
      const started = performance.now();
      try {
        return await invocation(event, lambdaContext(distributorFn.deployedName, distributorFn.timeoutSeconds));
      } finally {
        invocations.busyMs += performance.now() - started;
      }
    };
    const scheduler = new Scheduler([distributorFn], 1, async () => {
      invocations.scheduled++;
      return runInvocation(scheduledEvent(`${distributorFn.deployedName}-schedule`));
    });
    scheduler.start();
    closers.push(
      () => scheduler.stop(),
      () => invokeServer.close(),
      () => service.close(),
    );
  }

  // A failure repeats for every record of a batch: each reason is said once, with its count at the end.
  const failures = new Map<string, number>();
  const router = createRouterService(loadRouterConfig({ ...options.env, ...onDemandEnv, ...options.routerEnv }), {
    failed: (failure) => {
      const reason = `${failure.kind} ${failure.reason}`;
      if (!failures.has(reason)) progress(`router: not routed ${reason}`);
      failures.set(reason, (failures.get(reason) ?? 0) + 1);
    },
    counted: () => undefined,
    tenantRouted: () => undefined,
    stagingQueueKept: () => undefined,
    tenantlessRouted: () => undefined,
    nameShortened: () => undefined,
    passRequestFailed: (target, error) => progress(`router: pass request failed for ${target}: ${String(error)}`),
    directRoutingUnread: (error) => progress(`router: direct-routing grants or depths unread: ${String(error)}`),
  });
  closers.unshift(() => router.close());

  return {
    route: (event) => router.route(event),
    invocations,
    async stop() {
      for (const close of closers) await close().catch((error) => progress(`stopping: ${String(error)}`));
      for (const [reason, count] of failures) progress(`router: ${count} records not routed: ${reason}`);
    },
  };
}
