import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import type { Env } from '../platform/config';
import {
  checkConnections,
  resolveConnections,
  type SecretConnection,
  SecretCredentials,
  usesSecrets,
} from '../platform/secrets';
import { checkVariableNames } from './variables';

/** What a part's composition root (lib/<part>/service.ts) gives the one Lambda wiring of functions/. */
export interface FunctionDefinition<C, E, R> {
  /** The function's name in its logs and metrics. */
  readonly name: string;
  /** The connection URLs whose credentials may come from Secrets Manager. */
  readonly connections: readonly SecretConnection[];
  /** Reads and checks the configuration, building nothing: at cold start, and after a password rotation. */
  load(env: Env): C;
  /** The per-invocation core, built once from a checked configuration and the function's own logger and metrics. */
  build(config: C, observability: Observability): FunctionCore<E, R>;
}

/** A Fairway Lambda handler; `close` ends its connections (a CLI invocation that must exit, a test). */
export type LambdaFunction<E, R> = ((event: E, context: Context) => Promise<R>) & { close(): Promise<void> };

/**
 * Every function's handler, made the same way (functions/*.ts are one line): the variable names and
 * connection URLs checked and the configuration read at cold start (a ConfigError stops the
 * container before any event), the credentials taken from Secrets Manager where configured and
 * picked up again after a rotation (`withSecrets`, below), the core built once per container
 * inside the shared logging and metrics middlewares (lib/wiring/lambda-function.ts).
 */
export function lambdaFunction<C, E, R>(
  definition: FunctionDefinition<C, E, R>,
  env: Env = process.env,
): LambdaFunction<E, R> {
  const handler = withSecrets<C, E, R>(env, definition.connections, definition.load, (config) =>
    functionHandler<E, R>(definition.name, (observability) => definition.build(config, observability)),
  );
  return Object.assign((event: E, context: Context) => handler(event, context), {
    close: async () => handler.close?.(),
  });
}

export type Handler<E, R> = ((event: E, context: Context) => Promise<R>) & { close?: () => Promise<void> };

/**
 * The handler `build` makes from the configuration `load` reads, once the credentials of
 * `connections` are in their URLs. The configuration is loaded and checked now, at cold start, in
 * every case, after the variable names (a misspelled one is refused) and where credentials may be. Without any secret (locally, in tests) the handler is built at once from `env` as it
 * is. With secrets it is built on the first invocation, and built again (the old one closed)
 * whenever the credentials change: after `SECRET_MAX_AGE_SECONDS` a rotation is picked up, and an
 * invocation that failed on authentication reads the secrets again at once, so the next
 * invocation uses the new password.
 */
export function withSecrets<C, E, R>(
  env: Env,
  connections: readonly SecretConnection[],
  load: (env: Env) => C,
  build: (config: C, env: Env) => Handler<E, R>,
  secrets: SecretCredentials = new SecretCredentials(),
): Handler<E, R> {
  const config = loadAtColdStart(env, connections, load);
  if (!usesSecrets(env, connections)) return build(config, env);

  let current: { urls: string; handler: Handler<E, R> } | undefined;
  let refresh = false;
  const handlerFor = async () => {
    const resolved = await resolveConnections(env, connections, secrets, refresh);
    refresh = false;
    const urls = JSON.stringify(connections.map((c) => resolved[c.url]));
    if (current?.urls !== urls) {
      const stale = current;
      current = { urls, handler: build(load(resolved), resolved) };
      await stale?.handler.close?.().catch(() => undefined);
    }
    return current.handler;
  };
  const handler = async (event: E, context: Context) => {
    const built = await handlerFor();
    try {
      return await built(event, context);
    } catch (error) {
      if (isAuthenticationFailure(error)) refresh = true;
      throw error;
    }
  };
  const close = async () => {
    const built = current;
    current = undefined;
    await built?.handler.close?.();
  };
  return Object.assign(handler, { close });
}

/**
 * What every function checks at cold start, in order, before anything connects: its variable names
 * (a misspelled one is refused, naming the closest), its connection URLs, then its configuration.
 * `fairway doctor` runs the same, so it refuses what a function would.
 */
export function loadAtColdStart<C>(env: Env, connections: readonly SecretConnection[], load: (env: Env) => C): C {
  checkVariableNames(env);
  checkConnections(env, connections);
  return load(env);
}

/**
 * Whether `error`, or an error it wraps, is a refused login: PostgreSQL's invalid password or
 * authorization (28P01, 28000), RabbitMQ's ACCESS_REFUSED (403), the management API's 401.
 */
export function isAuthenticationFailure(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 10; depth++) {
    const { code, status } = current as { code?: unknown; status?: unknown };
    if (code === '28P01' || code === '28000' || status === 401 || /ACCESS[-_]REFUSED/.test(current.message))
      return true;
    current = current.cause;
  }
  return false;
}

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
