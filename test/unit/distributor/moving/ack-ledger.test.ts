import { ackLedger } from '../../../../lib/distributor/moving/publish-moved';

describe('ackLedger', () => {
  it('hands out the highest tag of a settled run, once', () => {
    const ledger = ackLedger<string>();
    for (const tag of [5, 6, 7]) ledger.delivered(tag);
    ledger.confirmed(5, 'm5');
    ledger.confirmed(6, 'm6');
    expect(ledger.take()).toBe('m6');
    expect(ledger.take()).toBeUndefined();
    ledger.confirmed(7, 'm7');
    expect(ledger.take()).toBe('m7');
  });

  it('never acks past a tag whose confirm has not come (confirms out of order)', () => {
    const ledger = ackLedger<string>();
    for (const tag of [1, 2, 3, 4]) ledger.delivered(tag);
    ledger.confirmed(2, 'm2');
    ledger.confirmed(4, 'm4');
    expect(ledger.take()).toBeUndefined();
    ledger.confirmed(1, 'm1');
    expect(ledger.take()).toBe('m2');
    ledger.confirmed(3, 'm3');
    expect(ledger.take()).toBe('m4');
  });

  it('counts nacked tags as settled but never hands one out: the multiple ack names a confirmed tag', () => {
    const ledger = ackLedger<string>();
    for (const tag of [1, 2, 3, 4]) ledger.delivered(tag);
    ledger.confirmed(1, 'm1');
    ledger.nacked(2);
    ledger.confirmed(3, 'm3');
    ledger.nacked(4);
    expect(ledger.take()).toBe('m3');
    expect(ledger.take()).toBeUndefined();
  });

  it('hands out nothing for a run of nacked tags alone', () => {
    const ledger = ackLedger<string>();
    ledger.delivered(9);
    ledger.nacked(9);
    expect(ledger.take()).toBeUndefined();
  });

  it('starts at the first delivery: a channel reused after other moves starts high', () => {
    const ledger = ackLedger<string>();
    expect(ledger.take()).toBeUndefined();
    ledger.delivered(101);
    ledger.delivered(102);
    ledger.confirmed(102, 'm102');
    expect(ledger.take()).toBeUndefined();
    ledger.confirmed(101, 'm101');
    expect(ledger.take()).toBe('m102');
  });

  it('gives back the confirmed messages a missing confirm holds back, once', () => {
    const ledger = ackLedger<string>();
    for (const tag of [1, 2, 3, 4]) ledger.delivered(tag);
    ledger.confirmed(1, 'm1');
    ledger.confirmed(3, 'm3');
    ledger.nacked(4);
    expect(ledger.take()).toBe('m1');
    expect(ledger.heldBack()).toEqual(['m3']);
    expect(ledger.heldBack()).toEqual([]);
  });
});
