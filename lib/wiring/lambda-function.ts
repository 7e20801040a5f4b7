import type { Context } from 'aws-lambda';
import type { Env } from '../platform/config';
import { type FunctionCore, functionHandler, type Observability } from '../platform/runtime';
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
 * inside the shared logging and metrics middlewares (lib/platform/runtime.ts).
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
