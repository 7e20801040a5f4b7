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
});
