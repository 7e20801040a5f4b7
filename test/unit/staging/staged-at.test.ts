import { STAGED_AT_HEADER, stampedForSizing, stampStagedAt, takeStagedAt } from '../../../lib/staging/staging-names';

/** The stamp as amqplib encodes and decodes it: a table with `at` an AMQP timestamp field. */
const stamp = (at: number, sent?: { value: unknown }) => ({
  at: { '!': 'timestamp', value: at },
  ...(sent ? { sent: sent.value } : {}),
});

describe('the staged-at stamp (x-fairway-staged-at)', () => {
  it("is added beside the message's headers, the sender's own value of its name kept inside it", () => {
    const headers = { 'x-caf-worker-retry': '2', [STAGED_AT_HEADER]: 'forged' };
    expect(stampStagedAt(headers, 1_700_000_000_000)).toEqual({
      'x-caf-worker-retry': '2',
      [STAGED_AT_HEADER]: stamp(1_700_000_000_000, { value: 'forged' }),
    });
    expect(headers[STAGED_AT_HEADER]).toBe('forged');
    expect(stampStagedAt(undefined, 5)).toEqual({ [STAGED_AT_HEADER]: stamp(5) });
    expect(stampStagedAt({ [STAGED_AT_HEADER]: null }, 5)).toEqual({ [STAGED_AT_HEADER]: stamp(5, { value: null }) });
  });

  it('is sized as the int64 it encodes to (the sizing refuses the type marker in senders’ headers)', () => {
    const stamped = stampStagedAt({ a: 1, [STAGED_AT_HEADER]: 'x' }, 7);
    expect(stampedForSizing(stamped)).toEqual({ a: 1, [STAGED_AT_HEADER]: { at: 7, sent: 'x' } });
  });

  it.each<[string, Record<string, unknown> | undefined, number | undefined, Record<string, unknown> | undefined]>([
    ['a stamped message', { a: 1, [STAGED_AT_HEADER]: stamp(1_700_000_000_000) }, 1_700_000_000_000, { a: 1 }],
    [
      'a stamped message whose sender had the header: theirs back, in its place',
      { [STAGED_AT_HEADER]: stamp(9, { value: { n: [1] } }), a: 1 },
      9,
      { [STAGED_AT_HEADER]: { n: [1] }, a: 1 },
    ],
    ['routed before the stamp: no time, headers as they are', { a: 1 }, undefined, { a: 1 }],
    ['no headers at all', undefined, undefined, undefined],
    // What a sender can write (or an older router's bare number): theirs, never a wait, never taken off.
    ['an epoch ms a sender wrote', { [STAGED_AT_HEADER]: 1 }, undefined, { [STAGED_AT_HEADER]: 1 }],
    ['a string', { [STAGED_AT_HEADER]: 'forged' }, undefined, { [STAGED_AT_HEADER]: 'forged' }],
    ['a look-alike table', { [STAGED_AT_HEADER]: { at: 1 } }, undefined, { [STAGED_AT_HEADER]: { at: 1 } }],
    [
      'a timestamp beside another key',
      { [STAGED_AT_HEADER]: { ...stamp(1), more: 1 } },
      undefined,
      { [STAGED_AT_HEADER]: { ...stamp(1), more: 1 } },
    ],
  ])('%s', (_name, headers, stagedAt, rest) => {
    const taken = takeStagedAt(headers);
    expect(taken.stagedAt).toBe(stagedAt);
    expect(taken.headers).toEqual(rest);
  });

  it('taking it off leaves every other header, nested values included, and the original untouched', () => {
    const headers = { nested: { a: [1, 2] }, [STAGED_AT_HEADER]: stamp(7) };
    expect(takeStagedAt(headers).headers).toEqual({ nested: { a: [1, 2] } });
    expect(headers).toHaveProperty(STAGED_AT_HEADER, stamp(7));
  });

  it('round-trips any headers: stamped then taken gives them back as they were', () => {
    for (const headers of [{}, { a: 1 }, { [STAGED_AT_HEADER]: 'x', b: [null] }, { [STAGED_AT_HEADER]: stamp(3) }]) {
      expect(takeStagedAt(stampStagedAt(headers, 42))).toEqual({ stagedAt: 42, headers });
    }
  });
});
