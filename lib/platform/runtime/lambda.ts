import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { createObservability, type Observability } from './observability';

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
