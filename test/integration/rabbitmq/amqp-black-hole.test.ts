import type { ConfirmChannel } from 'amqplib';
import { BrokerError, BrokerTimeoutError, errorText } from '../../../lib/platform/errors';
import { AMQP_BOUNDS } from '../../../lib/platform/network-bounds';
import { type ConfirmOutcome, publishAndConfirm } from '../../../lib/rabbitmq/confirms';
import { AmqpSession, channelAnswer, closeWithin, isInDoubt } from '../../../lib/rabbitmq/connection';
import { blackHole, endingOf, type StallingProxy, stallingProxy, type TcpServer } from '../../harness/black-hole';
import { createTestVhost, type TestVhost } from '../../harness/rabbit';

/** The shortest function timeout (the router's, serverless.yml): every bound must end a call before it. */
const ROUTER_TIMEOUT_MS = 30_000;
/** Past any bound here, inside jest's timeout: a client without a bound fails here instead of hanging. */
const GIVE_UP_MS = 40_000;

/** `vhost`'s AMQP URL through `proxy`. */
function throughProxy(vhost: TestVhost, proxy: TcpServer): string {
  const url = new URL(vhost.amqpUrl);
  url.host = `${proxy.host}:${proxy.port}`;
  return url.toString();
}

// Issue 26 item 4: AMQP connect and every channel RPC are bounded (lib/platform/network-bounds.ts AMQP_BOUNDS).
describe('AMQP against a broker that accepts and never answers', () => {
  let hole: TcpServer;
  let rabbit: TestVhost;
  beforeAll(async () => {
    [hole, rabbit] = await Promise.all([blackHole(), createTestVhost()]);
  });
  afterAll(() => Promise.all([hole?.close(), rabbit?.delete()]));

  it.each(['amqp', 'amqps'])('a %s connect fails, naming RabbitMQ, before the function timeout', async (scheme) => {
    const session = new AmqpSession(hole.url(scheme, 'guest:guest'));
    const before = hole.accepted();
    const ending = await endingOf(session.connection(), GIVE_UP_MS);
    expect(ending).toMatchObject({ pending: false });
    if (ending.pending) return;
    expect(ending.error).toBeInstanceOf(BrokerError);
    expect(errorText(ending.error)).toMatch(/Cannot connect to RabbitMQ at amqps?:\/\/127\.0\.0\.1/);
    expect(ending.ms).toBeLessThan(ROUTER_TIMEOUT_MS);
    expect(hole.accepted()).toBe(before + 1); // it reached the server, which never answered
  });

  describe('on a connection whose broker stops answering', () => {
    let proxy: StallingProxy;
    let session: AmqpSession;
    beforeEach(async () => {
      proxy = await stallingProxy({ host: '127.0.0.1', port: Number(new URL(rabbit.amqpUrl).port || 5672) });
      session = new AmqpSession(throughProxy(rabbit, proxy));
    });
    afterEach(async () => {
      await proxy.close(); // first: a close the broker never answers would wait its bound
      await session.close();
    });

    it('a channel open fails within its bound, and the next call connects afresh', async () => {
      await session.connection();
      proxy.stall();
      const ending = await endingOf(session.openChannel(), GIVE_UP_MS);
      expect(ending).toMatchObject({ pending: false });
      if (ending.pending) return;
      expect(ending.error).toBeInstanceOf(BrokerTimeoutError);
      expect(errorText(ending.error)).toMatch(/RabbitMQ did not answer channel\.open within/);
      expect(ending.ms).toBeLessThan(ROUTER_TIMEOUT_MS);
      // The silent connection is not used again: the next channel asks for a new one.
      const accepted = proxy.accepted();
      await endingOf(session.openChannel(), GIVE_UP_MS);
      expect(proxy.accepted()).toBe(accepted + 1);
    });

    it('a declare on the shared channel fails within its bound, and that channel is not handed out again', async () => {
      const shared = session.sharedChannel();
      const channel = await shared;
      proxy.stall();
      const ending = await endingOf(
        channelAnswer(channel, channel.assertQueue('never-declared', { durable: true }), 'queue.declare'),
        GIVE_UP_MS,
      );
      expect(ending).toMatchObject({ pending: false });
      if (ending.pending) return;
      expect(errorText(ending.error)).toMatch(/RabbitMQ did not answer queue\.declare within/);
      expect(ending.ms).toBeLessThan(ROUTER_TIMEOUT_MS);
      expect(isInDoubt(channel)).toBe(true);
      const next = session.sharedChannel();
      next.catch(() => undefined); // a channel open on the silent connection, which fails in its turn
      expect(next).not.toBe(shared);
    });

    it('publishes that fill the send buffer fail within twice the confirm timeout, not never', async () => {
      const channel: ConfirmChannel = await session.sharedConfirmChannel();
      proxy.stall();
      // amqplib reports a full buffer past 1,024 frames queued on the channel, after the kernel's buffers.
      const body = Buffer.alloc(16 * 1024, 'x');
      const publications = Array.from({ length: 3_000 }, () => ({ queue: 'nowhere', body, options: {} }));
      const timeoutMs = 2_000;
      let outcomes: ConfirmOutcome[] = [];
      const publishing = publishAndConfirm(channel, publications, timeoutMs).then((o) => {
        outcomes = o;
      });
      const ending = await endingOf(publishing, GIVE_UP_MS);
      expect(ending).toMatchObject({ pending: false, error: undefined });
      expect(ending.ms).toBeLessThan(ROUTER_TIMEOUT_MS);
      expect(outcomes).toHaveLength(publications.length);
      expect(new Set(outcomes.map((o) => (o.confirmed ? 'confirmed' : o.reason)))).toEqual(
        new Set(['timeout', 'unsent']),
      );
    });

    it('a close gives up within its bound', async () => {
      const channel = await session.openChannel();
      proxy.stall();
      const ending = await endingOf(closeWithin(channel), GIVE_UP_MS);
      expect(ending).toMatchObject({ pending: false, error: undefined });
      expect(ending.ms).toBeLessThan(5 * AMQP_BOUNDS.closeTimeoutMs);
    });
  });
});
