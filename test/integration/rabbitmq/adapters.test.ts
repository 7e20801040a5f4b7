import { redactUrl } from '../../../lib/platform/config';
import { AmqpSession } from '../../../lib/rabbitmq/connection';
import { ManagementClient } from '../../../lib/rabbitmq/management';
import { eventually } from '../../harness/eventually';
import { createTestVhost, type TestVhost } from '../../harness/rabbit';

describe('RabbitMQ adapters', () => {
  let rabbit: TestVhost;
  let session: AmqpSession;
  beforeAll(async () => {
    rabbit = await createTestVhost();
    session = new AmqpSession(rabbit.amqpUrl);
  });
  afterAll(async () => {
    await session?.close();
    await rabbit?.delete();
  });

  it("opens its connection with Nagle's algorithm off (noDelay), so a channel close waits on no delayed ACK", async () => {
    const { connection } = (await session.connection()) as unknown as { connection: { stream: object } };
    const socket = connection.stream;
    const noDelay = Object.getOwnPropertySymbols(socket).find((symbol) => String(symbol) === 'Symbol(kSetNoDelay)');
    expect(noDelay).toBeDefined();
    expect((socket as Record<symbol, unknown>)[noDelay!]).toBe(true);
  });

  it('lists every queue of the vhost, unpaged once it outgrew a page, with arguments', async () => {
    const channel = await session.openConfirmChannel();
    const names = Array.from({ length: 7 }, (_, i) => `q${i}`);
    for (const name of names)
      await channel.assertQueue(name, { durable: true, arguments: { 'x-max-length': 10 + Number(name[1]) } });
    await channel.close();

    const requests: string[] = [];
    const counting: typeof fetch = (input, init) => {
      requests.push(String(input));
      return fetch(input, init);
    };
    const client = new ManagementClient(rabbit.managementUrl, rabbit.vhost, counting, 3);
    const queues = await client.listQueues();
    expect(queues.map((q) => q.name).sort()).toEqual(names);
    expect(queues.find((q) => q.name === 'q4')).toMatchObject({ durable: true, arguments: { 'x-max-length': 14 } });
    // A first page showed more pages: the rest of the listing came unpaged (one request, not one per page).
    expect(requests).toHaveLength(2);
    expect(requests[1]).not.toContain('page=');
    expect(requests.every((r) => r.includes('columns=') && !r.includes('guest'))).toBe(true);

    // The client remembers the vhost is larger than a page: one unpaged request from then on.
    requests.length = 0;
    expect((await client.listQueues()).map((q) => q.name).sort()).toEqual(names);
    expect(requests).toHaveLength(1);
    expect(requests[0]).not.toContain('page=');

    // A vhost that fits one page is one paged request.
    requests.length = 0;
    const roomy = new ManagementClient(rabbit.managementUrl, rabbit.vhost, counting, 500);
    expect((await roomy.listQueues()).map((q) => q.name).sort()).toEqual(names);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toContain('page=1');
  });

  it('reads one queue, and undefined for a missing one', async () => {
    const client = new ManagementClient(rabbit.managementUrl, rabbit.vhost);
    expect(await client.getQueue('q1')).toMatchObject({ name: 'q1', durable: true });
    expect(await client.getQueue('missing')).toBeUndefined();
  });

  it('opens a new connection after the broker closed the old one', async () => {
    const first = await session.connection();
    const ours = await eventually(async () => {
      const connections = await rabbit.api<{ name: string; vhost: string }[]>(
        'GET',
        '/api/connections?columns=name,vhost',
      );
      const found = connections.filter((c) => c.vhost === rabbit.vhost);
      return found.length > 0 ? found : undefined;
    }, 'the management API to list our connection');
    const closed = new Promise((resolve) => first.once('close', resolve));
    for (const c of ours) await rabbit.api('DELETE', `/api/connections/${encodeURIComponent(c.name)}`);
    await closed;
    const second = await session.connection();
    expect(second).not.toBe(first);
    const channel = await session.openConfirmChannel();
    await channel.checkQueue('q1');
    await channel.close();
  });

  it('keeps one shared confirm channel until it closes, then opens another', async () => {
    const first = await session.sharedConfirmChannel();
    expect(await session.sharedConfirmChannel()).toBe(first);
    // A passive check of a missing queue is a channel error: the broker closes the channel.
    const closed = new Promise((resolve) => first.once('close', resolve));
    await expect(first.checkQueue('no-such-queue')).rejects.toThrow(/NOT_FOUND/);
    await closed;
    const second = await session.sharedConfirmChannel();
    expect(second).not.toBe(first);
    await second.checkQueue('q1');
  });

  it('never shows the password of a URL', () => {
    expect(redactUrl('amqp://user:s3cret@host:5672/vh')).toBe('amqp://host:5672');
    expect(redactUrl('not a url')).not.toContain('not a url');
  });
});
