import { ackLedger } from '../../../../lib/distributor/moving/publish-moved';

/** A ledger with `tags` delivered, each delivery's value `m<tag>`. */
const ledgerOf = (tags: number[]) => {
  const ledger = ackLedger<string>();
  for (const tag of tags) ledger.delivered(tag, `m${tag}`);
  return ledger;
};

describe('ackLedger', () => {
  it('hands out the highest tag of a settled run, once', () => {
    const ledger = ledgerOf([5, 6, 7]);
    ledger.confirmed(5);
    ledger.confirmed(6);
    expect(ledger.take()).toBe('m6');
    expect(ledger.take()).toBeUndefined();
    ledger.confirmed(7);
    expect(ledger.take()).toBe('m7');
  });

  it('never acks past a tag whose confirm has not come (confirms out of order)', () => {
    const ledger = ledgerOf([1, 2, 3, 4]);
    ledger.confirmed(2);
    ledger.confirmed(4);
    expect(ledger.take()).toBeUndefined();
    ledger.confirmed(1);
    expect(ledger.take()).toBe('m2');
    ledger.confirmed(3);
    expect(ledger.take()).toBe('m4');
  });

  it('counts nacked tags as settled but never hands one out: the multiple ack names a confirmed tag', () => {
    const ledger = ledgerOf([1, 2, 3, 4]);
    ledger.confirmed(1);
    ledger.nacked(2);
    ledger.confirmed(3);
    ledger.nacked(4);
    expect(ledger.take()).toBe('m3');
    expect(ledger.take()).toBeUndefined();
  });

  it('hands out nothing for a run of nacked tags alone', () => {
    const ledger = ledgerOf([9]);
    ledger.nacked(9);
    expect(ledger.take()).toBeUndefined();
  });

  it('starts at the first delivery: a channel reused after other moves starts high', () => {
    const ledger = ackLedger<string>();
    expect(ledger.take()).toBeUndefined();
    ledger.delivered(101, 'm101');
    ledger.delivered(102, 'm102');
    ledger.confirmed(102);
    expect(ledger.take()).toBeUndefined();
    ledger.confirmed(101);
    expect(ledger.take()).toBe('m102');
  });

  // finish: c confirmed, n nacked already, u unsettled (its confirm never came); tags from 1, none taken before.
  const ack = (upTo: string) => ({ ack: true, upTo });
  const putBack = (upTo: string) => ({ ack: false, upTo });
  it.each([
    ['nothing delivered', '', []],
    ['all confirmed: one ack', 'ccc', [ack('m3')]],
    ['all unsettled: one put back', 'uuu', [putBack('m3')]],
    [
      'a gap: the run below acked, the gap put back, the run above acked',
      'ccuccc',
      [ack('m2'), putBack('m3'), ack('m6')],
    ],
    ['a gap first: put back, then one ack over the rest', 'uccc', [putBack('m1'), ack('m4')]],
    ['unsettled last: put back after the ack', 'ccuu', [ack('m2'), putBack('m4')]],
    ['gaps of several: one frame per run', 'cuucuuc', [ack('m1'), putBack('m3'), ack('m4'), putBack('m6'), ack('m7')]],
    ['nacked tags join either run, never end one', 'cncnuncn', [ack('m3'), putBack('m5'), ack('m7')]],
    ['nacked alone: nothing to send', 'nn', []],
    ['a nacked last is passed over', 'ccn', [ack('m2')]],
  ])('finish, %s (%s)', (_case, states, frames) => {
    const tags = [...states].map((_, i) => i + 1);
    const ledger = ledgerOf(tags);
    [...states].forEach((state, i) => {
      if (state === 'c') ledger.confirmed(i + 1);
      if (state === 'n') ledger.nacked(i + 1);
    });
    expect(ledger.finish()).toEqual(frames);
  });

  it('finish settles only what take left, once', () => {
    const ledger = ledgerOf([1, 2, 3, 4, 5]);
    ledger.confirmed(1);
    ledger.confirmed(2);
    ledger.confirmed(4);
    expect(ledger.take()).toBe('m2');
    expect(ledger.finish()).toEqual([putBack('m3'), ack('m4'), putBack('m5')]);
    expect(ledger.finish()).toEqual([]);
    expect(ledger.take()).toBeUndefined();
  });
});
