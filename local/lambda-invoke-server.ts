import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Runs one asynchronous invocation of a function (the local stack: its real handler with a Lambda context). */
export type AsyncInvoke = (functionName: string, event: unknown) => Promise<unknown>;

/**
 * The Lambda Invoke API's asynchronous half on 127.0.0.1, for the local stack and the benches: the
 * functions' own Lambda client (LAMBDA_ENDPOINT) posts an `Event` invocation, gets 202 at once, and
 * the handler runs later, on its own, as on AWS. Only asynchronous invocations are served.
 */
export async function startLambdaInvokeServer(invoke: AsyncInvoke, failed: (error: unknown) => void = () => undefined) {
  const running = new Set<Promise<unknown>>();
  const invocations = new Map<string, number>();
  const server = createServer((request, response) => {
    const match = /^\/2015-03-31\/functions\/([^/]+)\/invocations/.exec(request.url ?? '');
    if (request.method !== 'POST' || !match) {
      response.writeHead(404).end();
      return;
    }
    if (request.headers['x-amz-invocation-type'] !== 'Event') {
      response.writeHead(400, { 'content-type': 'application/json' }).end('{"message":"only Event invocations"}');
      return;
    }
    const functionName = decodeURIComponent(match[1]!);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      let event: unknown;
      try {
        event = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      } catch {
        response.writeHead(400, { 'content-type': 'application/json' }).end('{"message":"payload is not JSON"}');
        return;
      }
      invocations.set(functionName, (invocations.get(functionName) ?? 0) + 1);
      response.writeHead(202, { 'content-type': 'application/json' }).end();
      const run = new Promise((resolve) => setImmediate(resolve))
        .then(() => invoke(functionName, event))
        .catch(failed)
        .finally(() => running.delete(run));
      running.add(run);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** Asynchronous invocations accepted, by function name. */
    invocations,
    /** Resolves once no invocation is running (those they started included). */
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
    /**
     * Refuses new invocations, then waits for those running: a chain of follow-up passes would keep
     * `idle` waiting while messages stay staged; here their next start fails instead (a warning).
     */
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.allSettled([...running]);
    },
  };
}
