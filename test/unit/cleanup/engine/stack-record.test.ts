import { candidateSchema, parseItem, stackRecordSchema } from '../../../../lib/cleanup/engine/stack-record';
import { FairwayError } from '../../../../lib/platform/errors';

describe('stack records parsed at the store boundary', () => {
  it('types the engine’s bookkeeping and keeps the operation opaque for the codec', () => {
    const record = parseItem(stackRecordSchema, { pk: 'job', sk: 'op#1', kind: 7, attempts: 2, leaseUntil: 5 }, 'job');
    expect(record).toEqual({ sk: 'op#1', kind: 7, attempts: 2, leaseUntil: 5 });
    expect(parseItem(stackRecordSchema, { sk: 'op#2', kind: 'k', payload: '{}' }, 'job').attempts).toBe(0);
  });

  it('names the item and the field of a malformed record, never its value', () => {
    const parse = () => parseItem(candidateSchema, { sk: 'op#3', leaseUntil: 'secret-ish' }, 'some-job');
    expect(parse).toThrow(FairwayError);
    expect(parse).toThrow(/item op#3 of cleanup job some-job is malformed: .*leaseUntil/s);
    expect(parse).not.toThrow(/secret-ish/);
  });
});
