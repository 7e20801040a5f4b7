import { EventEmitter } from 'node:events';
import type { ConfirmChannel } from 'amqplib';
import { BrokerError, errorText } from '../../../lib/errors';
import { publishAll } from '../../../lib/routing/publish';

// What a real broker cannot be made to do on demand: accept a publish and never confirm it,
// or refuse one synchronously because the channel closed between two publishes.
class SilentChannel extends EventEmitter {
  published: string[] = [];
  publish(
    _exchange: string,
    queue: string,
    _body: Buffer,
    options: { mandatory?: boolean },
    confirm: (error?: Error) => void,
  ) {
    if (queue === 'closed') throw new Error('Channel closed');
    expect(options.mandatory).toBe(true);
    this.published.push(queue);
    if (queue === 'acked') setImmediate(() => confirm(undefined));
    return true;
  }
}

describe('publishAll', () => {
  it('reports no confirm within the timeout, and a refused publish, as not routed', async () => {
    const channel = new SilentChannel();
    const outcomes = await publishAll(
      channel as unknown as ConfirmChannel,
      ['acked', 'silent', 'closed'].map((queue) => ({ queue, body: Buffer.from('x'), options: {} })),
      50,
    );
    for (const outcome of outcomes) if (!outcome.routed) expect(outcome.error).toBeInstanceOf(BrokerError);
    expect(
      outcomes.map((outcome) => (outcome.routed ? outcome : { ...outcome, error: errorText(outcome.error) })),
    ).toEqual([
      { routed: true },
      { routed: false, error: 'BrokerError: the broker did not confirm within 50 ms', unconfirmed: true },
      { routed: false, error: 'BrokerError: could not publish (caused by Error: Channel closed)' },
    ]);
    expect(channel.listenerCount('return')).toBe(0);
  });

  it('takes the first answer of a publish: a refused publish that the closing channel fails again counts once', async () => {
    // amqplib keeps the confirm callback of a publish that threw, and fails it when the channel closes.
    const channel = new SilentChannel();
    const failedAgain = Object.assign(channel, {
      publish(_exchange: string, queue: string, _body: Buffer, _options: object, confirm: (error?: Error) => void) {
        if (queue === 'closed') {
          setImmediate(() => confirm(new Error('Channel closed')));
          throw new Error('Channel closed');
        }
        return true; // never confirmed
      },
    });
    const outcomes = await publishAll(
      failedAgain as unknown as ConfirmChannel,
      ['closed', 'silent'].map((queue) => ({ queue, body: Buffer.from('x'), options: {} })),
      50,
    );
    // Had the second answer counted, the batch would end before the silent publish's timeout.
    expect(outcomes.map((outcome) => (outcome.routed ? 'routed' : errorText(outcome.error)))).toEqual([
      'BrokerError: could not publish (caused by Error: Channel closed)',
      'BrokerError: the broker did not confirm within 50 ms',
    ]);
  });

  it('fails a returned message with a BrokerError that keeps the reply code', async () => {
    const channel = new SilentChannel();
    const returning = Object.assign(channel, {
      publish(_exchange: string, queue: string, _body: Buffer, _options: object, confirm: (error?: Error) => void) {
        // As the broker does: basic.return (312 NO_ROUTE) before the ack.
        setImmediate(() => {
          channel.emit('return', { fields: { routingKey: queue, replyCode: 312 } });
          confirm(undefined);
        });
        return true;
      },
    });
    const [outcome] = await publishAll(
      returning as unknown as ConfirmChannel,
      [{ queue: 'gone', body: Buffer.from('x'), options: {} }],
      1000,
    );
    expect(outcome).toEqual({ routed: false, error: expect.any(BrokerError) });
    expect(outcome!.routed === false && outcome!.error).toMatchObject({
      replyCode: 312,
      message: 'the broker returned it: no queue "gone" to route to',
    });
  });
});
