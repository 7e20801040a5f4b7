import { createServer, type Server, type Socket } from 'node:net';
import { errorText, ManagementApiError } from '../../../lib/platform/errors';
import { ManagementClient } from '../../../lib/rabbitmq/management';
import { blackHole, endingOf, type TcpServer } from '../../harness/black-hole';

/** The router's timeout (serverless.yml), the shortest of the functions that call the management API. */
const ROUTER_TIMEOUT_MS = 30_000;
const GIVE_UP_MS = 40_000;

/** Answers every request with a 200 and the first byte of a JSON body, then nothing more. */
async function stallsMidBody(): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once('data', () =>
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n['),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://guest:guest@127.0.0.1:${port}`,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

// Issue 26 item 4: every management API request is bounded (MANAGEMENT_API_TIMEOUT_MS), its body too.
describe('the management API client against a server that accepts and never answers', () => {
  let hole: TcpServer;
  let midBody: Awaited<ReturnType<typeof stallsMidBody>>;
  beforeAll(async () => {
    [hole, midBody] = await Promise.all([blackHole(), stallsMidBody()]);
  });
  afterAll(() => Promise.all([hole?.close(), midBody?.close()]));

  it('a listing fails, naming the management API, before the function timeout', async () => {
    const client = new ManagementClient(hole.url('http', 'guest:guest'), '/');
    const ending = await endingOf(client.listQueues(), GIVE_UP_MS);
    expect(ending).toMatchObject({ pending: false });
    if (ending.pending) return;
    expect(ending.error).toBeInstanceOf(ManagementApiError);
    expect(errorText(ending.error)).toMatch(
      /RabbitMQ management API at http:\/\/127\.0\.0\.1:\d+ did not answer GET \S+ within \d+ ms/,
    );
    expect(ending.ms).toBeLessThan(ROUTER_TIMEOUT_MS);
    expect(hole.accepted()).toBeGreaterThan(0);
  });

  it('a body that stops half way fails the same way, not as a body that is not JSON', async () => {
    const client = new ManagementClient(midBody.url, '/');
    const ending = await endingOf(client.getQueue('q'), GIVE_UP_MS);
    expect(ending).toMatchObject({ pending: false });
    if (ending.pending) return;
    expect(ending.error).toBeInstanceOf(ManagementApiError);
    expect(errorText(ending.error)).toMatch(
      /RabbitMQ management API at http:\/\/127\.0\.0\.1:\d+ did not answer GET \S+ within \d+ ms/,
    );
    expect(ending.ms).toBeLessThan(ROUTER_TIMEOUT_MS);
  });
});
