import type { Context } from 'aws-lambda';

/**
 * The real handlers, loaded on demand: each reads its configuration from process.env when its
 * module loads (cold start), so set the environment first and load only what you invoke.
 */
export type Handler = ((event: unknown, context: Context) => Promise<unknown>) & {
  /** Ends the handler's connections and pools (each function's handler has one, lib/wiring/lambda-function.ts). */
  close?: () => Promise<void>;
};

const loaders = {
  router: () => import('../functions/router'),
  distributor: () => import('../functions/distributor'),
  registryTimebasedCleanup: () => import('../functions/registryTimebasedCleanup'),
  registryStatus90Cleanup: () => import('../functions/registryStatus90Cleanup'),
  repositoryCleanup: () => import('../functions/repositoryCleanup'),
};

export type FunctionName = keyof typeof loaders;
export const functionNames = Object.keys(loaders) as FunctionName[];

export function isFunctionName(name: string): name is FunctionName {
  return Object.hasOwn(loaders, name);
}

export async function loadHandler(name: FunctionName): Promise<Handler> {
  const module = await loaders[name]();
  return module.handler as unknown as Handler;
}
