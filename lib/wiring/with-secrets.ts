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
