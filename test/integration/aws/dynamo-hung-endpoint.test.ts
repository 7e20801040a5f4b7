import { createServer, type Server, type Socket } from 'node:net';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../../../lib/aws/dynamo';

/** Issue 12, item 10: a hung dependency ends a request before the Lambda timeout instead of leaving it running in a frozen container. */
describe('the DynamoDB client gives up on a hung endpoint before any Lambda timeout', () => {
  let server: Server;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    // Accepts connections and never answers: a DynamoDB endpoint that hangs.
    server = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('fails the request within 20 s (the router, the shortest function, has 30 s)', async () => {
    const { port } = server.address() as { port: number };
    const doc = documentClient(
      { region: 'eu-west-1', endpoint: `http://127.0.0.1:${port}` },
      { accessKeyId: 'local', secretAccessKey: 'local' },
    );
    const started = Date.now();
    const outcome = await Promise.race([
      doc.send(new GetCommand({ TableName: 't', Key: { pk: 'x' } })).then(
        () => 'answered',
        () => 'failed',
      ),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 20_000)),
    ]);
    doc.destroy();
    expect(outcome).toBe('failed');
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 30_000);
});
