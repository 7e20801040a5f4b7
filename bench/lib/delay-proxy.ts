import type { AddressInfo } from 'node:net';
import { connect, createServer, type Socket } from 'node:net';

export interface DelayProxy {
  port: number;
  close(): Promise<void>;
}

/**
 * A TCP proxy that holds every chunk coming back from `upstream` for `delayMs` before passing
 * it on, in order: each request-response exchange gains about `delayMs` of round trip, as the
 * network hop between a Lambda function and Amazon MQ or DynamoDB does (loopback has none).
 * Only the answering direction waits, because Node's timers do not go below 1 ms.
 */
export async function startDelayProxy(upstream: { host: string; port: number }, delayMs: number): Promise<DelayProxy> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const server = connect(upstream.port, upstream.host);
    for (const socket of [client, server]) {
      socket.setNoDelay(true);
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        server.destroy();
      });
    }
    client.pipe(server);
    relayDelayed(server, client, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Copies `from` to `to`, each chunk `delayMs` after it arrived, keeping order and back pressure. */
function relayDelayed(from: Socket, to: Socket, delayMs: number): void {
  const queue: { due: number; chunk: Buffer }[] = [];
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  const flush = () => {
    timer = undefined;
    const now = performance.now();
    while (queue.length > 0 && queue[0]!.due <= now) {
      if (!to.write(queue.shift()!.chunk)) {
        from.pause();
        to.once('drain', () => from.resume());
      }
    }
    if (queue.length > 0) timer = setTimeout(flush, queue[0]!.due - now);
    else if (ended) to.end();
  };
  from.on('data', (chunk: Buffer) => {
    queue.push({ due: performance.now() + delayMs, chunk });
    timer ??= setTimeout(flush, delayMs);
  });
  from.on('end', () => {
    ended = true;
    if (queue.length === 0 && !timer) to.end();
  });
}
