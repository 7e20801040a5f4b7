import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';

/** A local TCP server for the network-bounds tests (docs/configuration.md "Network bounds"). */
export interface TcpServer {
  readonly host: string;
  readonly port: number;
  /** `scheme://host:port`, with `userinfo@` when given. */
  url(scheme: string, userinfo?: string): string;
  /** Connections accepted so far: a test checks the client did reach it. */
  accepted(): number;
  close(): Promise<void>;
}

async function listen(onConnection: (socket: Socket) => void): Promise<{ server: Server; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, sockets };
}

function tcpServer(server: Server, sockets: Set<Socket>, accepted: () => number): TcpServer {
  const { port } = server.address() as { port: number };
  return {
    host: '127.0.0.1',
    port,
    url: (scheme, userinfo) => `${scheme}://${userinfo ? `${userinfo}@` : ''}127.0.0.1:${port}`,
    accepted,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * Accepts every connection and never answers, nor closes: a service that hangs, or a route that
 * drops every packet after the handshake. What a client sends is read and dropped.
 */
export async function blackHole(): Promise<TcpServer> {
  let accepted = 0;
  const { server, sockets } = await listen((socket) => {
    accepted++;
    socket.resume();
  });
  return tcpServer(server, sockets, () => accepted);
}

export interface StallingProxy extends TcpServer {
  /**
   * From now on nothing is forwarded either way, nor read from the clients (their send buffers
   * fill), on open connections and new ones alike; nothing is closed.
   */
  stall(): void;
}

/**
 * Forwards every connection to `target` until `stall()`; from then on it is a black hole: a broker
 * or database that stops answering in the middle of a conversation (a node frozen, a failover that
 * leaves the old connections without a peer).
 */
export async function stallingProxy(target: { host: string; port: number }): Promise<StallingProxy> {
  let accepted = 0;
  let stalled = false;
  const upstreams = new Set<Socket>();
  const { server, sockets } = await listen((client) => {
    accepted++;
    if (stalled) return; // never read: the client's send buffer fills as on a dead route
    const upstream = tcpConnect(target.port, target.host);
    upstreams.add(upstream);
    upstream.on('error', () => client.destroy());
    upstream.on('close', () => upstreams.delete(upstream));
    client.on('data', (chunk) => {
      if (!stalled) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!stalled) client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
  });
  const base = tcpServer(server, sockets, () => accepted);
  return {
    ...base,
    stall: () => {
      stalled = true;
      for (const client of sockets) client.pause();
    },
    async close() {
      for (const upstream of upstreams) upstream.destroy();
      await base.close();
    },
  };
}

/** How a call ended: its error (undefined if it answered), and after how long; `pending` if it had not ended by `giveUpMs`. */
export type Ending = { pending: true; ms: number } | { pending: false; error: unknown; ms: number };

/**
 * Waits for `call` at most `giveUpMs` (well past the bound it should keep, well inside the jest
 * timeout), so that a client with no bound fails its test instead of hanging it.
 */
export async function endingOf(call: Promise<unknown>, giveUpMs: number): Promise<Ending> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<'pending'>((resolve) => {
    timer = setTimeout(() => resolve('pending'), giveUpMs);
  });
  try {
    const outcome = await Promise.race([
      call.then(
        () => ({ error: undefined }),
        (error: unknown) => ({ error }),
      ),
      pending,
    ]);
    const ms = Date.now() - started;
    return outcome === 'pending' ? { pending: true, ms } : { pending: false, error: outcome.error, ms };
  } finally {
    clearTimeout(timer);
  }
}
