import type { ConfirmChannel } from 'amqplib';
import { BrokerError } from '../../../../lib/platform/errors';
import { readyCounts } from '../../../../lib/rabbitmq/ready-counts';

/** A channel that answers passive declares from `answers`: a count, or the error amqplib would raise. */
function channels(answers: Record<string, number | { code: number }>) {
  const opened: { closed: boolean }[] = [];
  const open = async () => {
    const state = { closed: false };
    opened.push(state);
    return {
      checkQueue: async (name: string) => {
        const answer = answers[name]!;
        if (typeof answer === 'number') return { queue: name, messageCount: answer, consumerCount: 0 };
        throw Object.assign(new Error(`Operation failed: QueueDeclare; ${answer.code}`), answer);
      },
      close: async () => {
        state.closed = true;
      },
    } as unknown as ConfirmChannel;
  };
  return { open, opened };
}

describe('readyCounts (passive declares; the broker refusals an AMQP test cannot stage on demand)', () => {
  it('a missing queue (404) reads as undefined and the next queue is read on a fresh channel', async () => {
    const { open, opened } = channels({ a: 3, gone: { code: 404 }, b: 5 });
    const counts = await readyCounts(open, ['a', 'gone', 'b']);
    expect([...counts]).toEqual([
      ['a', 3],
      ['gone', undefined],
      ['b', 5],
    ]);
    expect(opened).toEqual([{ closed: true }, { closed: true }]);
  });

  it('any other refusal is a BrokerError with its reply code, not a missing queue', async () => {
    const { open, opened } = channels({ a: 3, locked: { code: 403 }, b: 5 });
    const read = readyCounts(open, ['a', 'locked', 'b']);
    await expect(read).rejects.toThrow(BrokerError);
    await expect(read).rejects.toMatchObject({ replyCode: 403, message: expect.stringContaining('locked') });
    expect(opened).toEqual([{ closed: true }]);
  });
});
