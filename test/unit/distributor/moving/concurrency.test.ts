import { concurrencyLimit } from '../../../../lib/distributor/moving/channels';

describe('concurrencyLimit', () => {
  it('never runs more than the bound at once, runs every task, and keeps their results', async () => {
    const limit = concurrencyLimit(3);
    let running = 0;
    let most = 0;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        limit(async () => {
          running++;
          most = Math.max(most, running);
          await new Promise((resolve) => setImmediate(resolve));
          running--;
          if (i === 7) throw new Error('task 7 failed');
          return i;
        }).catch((error: Error) => error.message),
      ),
    );
    expect(most).toBe(3);
    expect(results).toEqual(Array.from({ length: 20 }, (_, i) => (i === 7 ? 'task 7 failed' : i)));
  });
});
