import type { Context } from 'aws-lambda';
import type { Env } from '../platform/config';
import type { Observability } from '../platform/runtime';
import { type FunctionCore, functionHandler } from '../platform/runtime';
import type { SecretConnection } from '../platform/secrets';
import { withSecrets } from './with-secrets';

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
 * picked up again after a rotation (lib/wiring/with-secrets.ts), the core built once per container
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
