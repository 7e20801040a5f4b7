import { connect, createServer, type Socket } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 that holds every chunk `oneWayMs` in each direction (a ~1 ms round trip
 * with 0.5), closer to Lambda ↔ Amazon MQ or DynamoDB than loopback (TOOLING.md). Order is kept:
 * each direction's chunks leave in the order they came.
 */
export async function startDelayProxy(upstreamHost: string, upstreamPort: number, oneWayMs = 0.5) {
  const sockets = new Set<Socket>();
  const delayed = (from: Socket, to: Socket) => {
    from.on('data', (chunk) => {
      setTimeout(() => to.writable && to.write(chunk), oneWayMs);
    });
    from.on('end', () => setTimeout(() => to.end(), oneWayMs));
    from.on('error', () => to.destroy());
    from.on('close', () => setTimeout(() => to.destroy(), oneWayMs));
  };
  const server = createServer((client) => {
    const upstream = connect({ host: upstreamHost, port: upstreamPort, noDelay: true });
    client.setNoDelay(true);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    }
    delayed(client, upstream);
    delayed(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** `url` with its host and port replaced by the proxy's. */
export function throughProxy(url: string, port: number): string {
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(port);
  return proxied.toString().replace(/\/$/, url.endsWith('/') ? '/' : '');
}
