import { type AddressInfo, createServer, type Server } from 'node:net';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketHandler } from '@electric-sql/pglite-socket';

const PROTOCOL_3 = 196_608;
const SYNC = 0x53; // 'S'
const SIMPLE_QUERY = 0x51; // 'Q'
const TERMINATE = 0x58; // 'X'

/**
 * Hands PGlite, which runs one session, to one client at a time. PGLiteSocketServer's own queue
 * interleaves clients message by message, so one client's Parse can replace another's unnamed
 * statement between its Parse and Bind ("unnamed prepared statement does not exist"), which the
 * cleanup jobs' concurrent pools hit at once. Here a client keeps the database from its first
 * message until a message that ends a request (Sync, simple Query, start-up, Terminate) has run
 * outside a transaction; the others wait their turn.
 */
class SessionQueue {
  private holder: number | undefined;
  private readonly waiting: Array<{ handlerId: number; resume: () => void }> = [];

  constructor(private readonly db: PGlite) {}

  async enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    await this.acquire(handlerId);
    let bytes = 0;
    try {
      await this.db.runExclusive(() =>
        this.db.execProtocolRawStream(message, {
          onRawData: (data) => {
            bytes += data.length;
            onData(data);
          },
        }),
      );
    } finally {
      if (endsRequest(message) && !this.db.isInTransaction()) this.release(handlerId);
    }
    return bytes;
  }

  /** A client went away: its turn ends, and a transaction it left open is rolled back. */
  clearQueueForHandler(handlerId: number): void {
    for (let i = this.waiting.length - 1; i >= 0; i--)
      if (this.waiting[i]!.handlerId === handlerId) this.waiting.splice(i, 1);
  }

  async clearTransactionIfNeeded(handlerId: number): Promise<void> {
    if (this.holder !== handlerId) return;
    if (this.db.isInTransaction()) await this.db.exec('ROLLBACK');
    this.release(handlerId);
  }

  private acquire(handlerId: number): Promise<void> {
    if (this.holder === undefined || this.holder === handlerId) {
      this.holder = handlerId;
      return Promise.resolve();
    }
    return new Promise((resume) => this.waiting.push({ handlerId, resume }));
  }

  private release(handlerId: number): void {
    if (this.holder !== handlerId) return;
    const next = this.waiting.shift();
    this.holder = next?.handlerId;
    next?.resume();
  }
}

function endsRequest(message: Uint8Array): boolean {
  const view = Buffer.from(message.buffer, message.byteOffset, message.byteLength);
  const startup = view.length >= 8 && view.readInt32BE(4) === PROTOCOL_3;
  return startup || view[0] === SYNC || view[0] === SIMPLE_QUERY || view[0] === TERMINATE;
}

export interface EmbeddedPostgres {
  /** A connection string node-postgres accepts. */
  url: string;
  stop(): Promise<void>;
}

/** An in-memory PostgreSQL (PGlite) behind a local socket that several node-postgres pools can use at once. */
export async function startEmbeddedPostgres(): Promise<EmbeddedPostgres> {
  const db = await PGlite.create();
  const queue = new SessionQueue(db);
  const handlers = new Set<PGLiteSocketHandler>();
  const server: Server = createServer((socket) => {
    // The handler reads the wire protocol and asks the queue to run each message.
    const handler = new PGLiteSocketHandler({ queryQueue: queue as never, closeOnDetach: true });
    handlers.add(handler);
    socket.on('close', () => handlers.delete(handler));
    void handler.attach(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      await Promise.all([...handlers].map((h) => h.detach(true)));
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await db.close();
    },
  };
}
