import { STAGED_AT_HEADER, stampStagedAt, takeStagedAt } from '../../../lib/queues/staged-at';

describe('the staged-at stamp (x-fairway-staged-at)', () => {
  it('is added beside the headers a message has, replacing a stale one, without changing the original', () => {
    const headers = { 'x-caf-worker-retry': '2', [STAGED_AT_HEADER]: 1 };
    expect(stampStagedAt(headers, 1_700_000_000_000)).toEqual({
      'x-caf-worker-retry': '2',
      [STAGED_AT_HEADER]: 1_700_000_000_000,
    });
    expect(headers[STAGED_AT_HEADER]).toBe(1);
    expect(stampStagedAt(undefined, 5)).toEqual({ [STAGED_AT_HEADER]: 5 });
  });

  it.each<[string, Record<string, unknown> | undefined, number | undefined, Record<string, unknown> | undefined]>([
    ['a stamped message', { a: 1, [STAGED_AT_HEADER]: 1_700_000_000_000 }, 1_700_000_000_000, { a: 1 }],
    ['routed before the stamp: no time, headers as they are', { a: 1 }, undefined, { a: 1 }],
    ['no headers at all', undefined, undefined, undefined],
    ['a stamp that is not a number is taken off, not trusted', { [STAGED_AT_HEADER]: 'soon' }, undefined, {}],
    ['a fractional stamp is not an epoch ms', { [STAGED_AT_HEADER]: 1.5 }, undefined, {}],
    ['zero is not a time', { [STAGED_AT_HEADER]: 0 }, undefined, {}],
  ])('%s', (_name, headers, stagedAt, rest) => {
    const taken = takeStagedAt(headers);
    expect(taken.stagedAt).toBe(stagedAt);
    expect(taken.headers).toEqual(rest);
  });

  it('taking it off leaves every other header, nested values included, and the original untouched', () => {
    const headers = { nested: { a: [1, 2] }, [STAGED_AT_HEADER]: 7 };
    expect(takeStagedAt(headers).headers).toEqual({ nested: { a: [1, 2] } });
    expect(headers).toHaveProperty(STAGED_AT_HEADER, 7);
  });
});
