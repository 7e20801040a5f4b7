import { EventEmitter } from 'node:events';
import type { ConfirmChannel } from 'amqplib';
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
    expect(outcomes).toEqual([
      { routed: true },
      { routed: false, reason: 'the broker did not confirm within 50 ms', unconfirmed: true },
      { routed: false, reason: 'could not publish (Channel closed)' },
    ]);
    expect(channel.listenerCount('return')).toBe(0);
  });
});
