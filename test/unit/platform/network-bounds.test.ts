import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import {
  AMQP_BOUNDS,
  awsCallBoundMs,
  DYNAMODB_BOUNDS,
  LAMBDA_INVOKE_BOUNDS,
  MANAGEMENT_API_TIMEOUT_MS,
  POSTGRES_TIMEOUT_DEFAULT_SECONDS,
  SECRETS_MANAGER_BOUNDS,
} from '../../../lib/platform/network-bounds';

const serverless = parse(readFileSync(join(__dirname, '../../../serverless.yml'), 'utf8'), { merge: true }) as {
  params: { default: Record<string, unknown> };
  functions: Record<string, { timeout: number | string }>;
};

/** A function's timeout as deployed with the default params, in ms. */
function timeoutMs(name: string): number {
  const raw = String(serverless.functions[name]!.timeout);
  const param = /^\$\{param:(\w+)\}$/.exec(raw)?.[1];
  return Number(param ? serverless.params.default[param] : raw) * 1000;
}

// Issue 26 item 4: one hung service ends an invocation's call before the function's timeout
// (docs/configuration.md "Network bounds"). A bound raised past a timeout fails here.
describe('the network bounds against the functions’ timeouts (serverless.yml)', () => {
  const router = timeoutMs('router');
  const distributor = timeoutMs('distributor');
  const cleanup = Math.min(...['registryTimebasedCleanup', 'repositoryCleanup'].map(timeoutMs));

  it('the router’s and the distributor’s clients each end a call inside the shorter timeout', () => {
    const shortest = Math.min(router, distributor);
    for (const bound of [
      awsCallBoundMs(DYNAMODB_BOUNDS),
      awsCallBoundMs(SECRETS_MANAGER_BOUNDS),
      awsCallBoundMs(LAMBDA_INVOKE_BOUNDS),
      AMQP_BOUNDS.connectTimeoutMs + AMQP_BOUNDS.operationTimeoutMs,
      MANAGEMENT_API_TIMEOUT_MS,
    ])
      expect(bound).toBeLessThan(shortest);
  });

  it('the cleanup jobs’ default database bound is below their timeout', () => {
    expect(POSTGRES_TIMEOUT_DEFAULT_SECONDS * 1000).toBeLessThan(cleanup);
    expect(awsCallBoundMs(DYNAMODB_BOUNDS)).toBeLessThan(cleanup);
  });
});
