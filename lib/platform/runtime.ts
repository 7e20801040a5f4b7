import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';

/**
 * Wraps a handler core with the middlewares every Fairway function shares:
 * structured logs carrying the Lambda context, EMF metrics flushed after each invocation, and an
 * X-Ray segment per invocation when tracing is on (it records no response: it may name tenants).
 */
export function lambdaHandler<TEvent, TResult>(
  { logger, metrics, tracer }: Observability,
  core: (event: TEvent, context: Context) => Promise<TResult>,
) {
  const handler = middy(core)
    .use(injectLambdaContext(logger))
    .use(logMetrics(metrics, { captureColdStartMetric: true, throwOnEmptyMetrics: false }));
  return tracer ? handler.use(captureLambdaHandler(tracer, { captureResponse: false })) : handler;
}

/** What a part's service gives its Lambda handler: the per-invocation core and how to end its connections. */
export interface FunctionCore<TEvent, TResult> {
  handle(event: TEvent, context: Context): Promise<TResult>;
  close(): Promise<void>;
}

/**
 * A function's Lambda handler: its own logger and metrics, and its core built from them once, at
 * cold start (each part's `service.ts` supplies `build`). `close` ends the core's connections, for
 * a handler replaced after a password rotation (lib/platform/secrets) or a CLI invocation that must exit.
 */
export function functionHandler<TEvent, TResult>(
  functionName: string,
  build: (observability: Observability) => FunctionCore<TEvent, TResult>,
) {
  const observability = createObservability(functionName);
  const core = build(observability);
  return Object.assign(
    lambdaHandler<TEvent, TResult>(observability, (event, context) => core.handle(event, context)),
    { close: () => core.close() },
  );
}

/** The logger and the metrics sink of one function; only `lib/<part>/service.ts` files build them. */
export interface Observability {
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** X-Ray segments per invocation; off unless the stage sets `tracing: true` (POWERTOOLS_TRACE_ENABLED) and on Lambda. */
  readonly tracer?: Tracer;
}

/**
 * A logger and a metrics sink of one function's own, so functions that share a process (`npm start`,
 * the CLI) never mix log fields or metric dimensions. Every log line names its function.
 */
export function createObservability(functionName: string): Observability {
  return {
    logger: new Logger({ serviceName: 'fairway', persistentKeys: { function: functionName } }),
    // serverless.yml gives each stage its own namespace, so one stage's metrics never fire another's alarms.
    metrics: new Metrics({ namespace: process.env.POWERTOOLS_METRICS_NAMESPACE || 'Fairway', serviceName: 'fairway' }),
    tracer: new Tracer({ serviceName: 'fairway', enabled: process.env.POWERTOOLS_TRACE_ENABLED === 'true' }),
  };
}
