import { EventEmitter } from 'node:events';
import type { ConfirmChannel } from 'amqplib';
import { BrokerError, errorText } from '../../../lib/platform/errors';
import { type ConfirmOutcome, publishAndConfirm } from '../../../lib/rabbitmq/confirms';

// What a real broker cannot be made to do on demand: accept a publish and never confirm it,
// or refuse one synchronously because the channel closed between two publishes.
class SilentChannel extends EventEmitter {
  published: string[] = [];
  publish(
    _exchange: string,
    queue: string,
    _body: Buffer,
    options: { mandatory?: boolean },
    confirm: (error?: Error | null) => void,
  ) {
    if (queue === 'closed') throw new Error('Channel closed');
    expect(options.mandatory).toBe(true);
    this.published.push(queue);
    if (queue === 'acked') setImmediate(() => confirm(null));
    return true;
  }
}

const text = (outcome: ConfirmOutcome) =>
  outcome.confirmed ? 'confirmed' : `${outcome.reason}: ${errorText(outcome.error)}`;
const publications = (queues: string[], body = 'x') =>
  queues.map((queue) => ({ queue, body: Buffer.from(body), options: {} }));

describe('publishAndConfirm', () => {
  it('reports no confirm within the timeout, and a refused publish, as unconfirmed', async () => {
    const channel = new SilentChannel();
    const outcomes = await publishAndConfirm(
      channel as unknown as ConfirmChannel,
      publications(['acked', 'silent', 'closed']),
      50,
    );
    for (const outcome of outcomes) if (!outcome.confirmed) expect(outcome.error).toBeInstanceOf(BrokerError);
    expect(outcomes.map(text)).toEqual([
      'confirmed',
      'timeout: BrokerError: the broker did not confirm within 50 ms',
      'unsent: BrokerError: could not publish (caused by Error: Channel closed)',
    ]);
    for (const event of ['return', 'error', 'close']) expect(channel.listenerCount(event)).toBe(0);
  });

  it('takes the first answer of a publish: a refused publish that the closing channel fails again counts once', async () => {
    const channel = Object.assign(new SilentChannel(), {
      publish(_exchange: string, queue: string, _body: Buffer, _options: object, confirm: (error?: Error) => void) {
        if (queue === 'closed') {
          setImmediate(() => confirm(new Error('Channel closed')));
          throw new Error('Channel closed');
        }
        return true; // never confirmed
      },
    });
    const outcomes = await publishAndConfirm(
      channel as unknown as ConfirmChannel,
      publications(['closed', 'silent']),
      50,
    );
    // Had the second answer counted, the batch would end before the silent publish's timeout.
    expect(outcomes.map(text)).toEqual([
      'unsent: BrokerError: could not publish (caused by Error: Channel closed)',
      'timeout: BrokerError: the broker did not confirm within 50 ms',
    ]);
  });

  it('fails a returned message with a BrokerError that keeps the reply code, and only publishes with its body', async () => {
    const channel = new SilentChannel();
    const confirms: ((error: Error | null) => void)[] = [];
    const returning = Object.assign(channel, {
      publish(_e: string, _q: string, _b: Buffer, _o: object, confirm: (error: Error | null) => void) {
        confirms.push(confirm);
        if (confirms.length === 2) {
          // As the broker does: basic.return (312 NO_ROUTE) of the second before any ack.
          setImmediate(() => {
            channel.emit('return', {
              fields: { exchange: '', routingKey: 'gone', replyCode: 312 },
              content: Buffer.from('second'),
            });
            for (const ack of confirms) ack(null);
          });
        }
        return true;
      },
    });
    const outcomes = await publishAndConfirm(
      returning as unknown as ConfirmChannel,
      [...publications(['gone'], 'first'), ...publications(['gone'], 'second')],
      1000,
    );
    expect(outcomes.map(text)).toEqual([
      'confirmed',
      'returned: BrokerError: the broker returned it (312 NO_ROUTE): no queue "gone" to route to',
    ]);
    expect(outcomes[1]).toMatchObject({ error: { replyCode: 312 } });
  });

  it("fails what is in flight when the channel closes, with the broker's reason and reply code", async () => {
    const channel = new SilentChannel();
    const closing = Object.assign(channel, {
      publish() {
        return true;
      },
    });
    // amqplib's own close listener comes first and fails every pending confirm with a bare error.
    channel.on('close', () => undefined);
    const waiting = publishAndConfirm(closing as unknown as ConfirmChannel, publications(['a', 'b']), 1000);
    setImmediate(() => {
      channel.emit(
        'error',
        Object.assign(new Error('Channel closed by server: 406 (PRECONDITION-FAILED)'), { code: 406 }),
      );
      channel.emit('close');
    });
    const outcomes = await waiting;
    expect(outcomes.map(text)).toEqual(
      Array(2).fill(
        'closed: BrokerError: the channel closed before the broker confirmed it (caused by Error: Channel closed by server: 406 (PRECONDITION-FAILED))',
      ),
    );
    expect(outcomes[0]).toMatchObject({ error: { replyCode: 406 } });
  });
});
