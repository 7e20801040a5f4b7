import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/** DynamoDB operations that write. */
export const dynamoWrites = ['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems'];

/**
 * An HTTP proxy in front of an embedded DynamoDB that counts requests by operation (the
 * `X-Amz-Target` header). Counting on the wire sees every request the product's own clients
 * send, however it builds them, retries included.
 */
export async function countingDynamoProxy(upstreamEndpoint: string) {
  const upstream = new URL(upstreamEndpoint);
  const counts = new Map<string, number>();
  let waitedMs = 0;
  const server = createServer((incoming, outgoing) => {
    const operation = String(incoming.headers['x-amz-target'] ?? 'unknown')
      .split('.')
      .pop()!;
    counts.set(operation, (counts.get(operation) ?? 0) + 1);
    const started = performance.now();
    outgoing.on('finish', () => (waitedMs += performance.now() - started));
    const forwarded = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on('error', (error) => outgoing.destroy(error));
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** Requests of these operations since the last reset. */
    count: (...operations: string[]) => operations.reduce((sum, op) => sum + (counts.get(op) ?? 0), 0),
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
    byOperation: () => new Map(counts),
    /** Milliseconds requests spent in DynamoDB, summed (overlapping requests each count). */
    waitedMs: () => waitedMs,
    reset: () => {
      counts.clear();
      waitedMs = 0;
    },
    close: () => {
      server.closeAllConnections(); // the SDK keeps its sockets alive
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
