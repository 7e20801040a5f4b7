import { rotateAfter } from '../../../../lib/distributor/planning/tenant-shares';

const names = (...list: string[]) => list.map((name) => ({ name }));

describe('rotateAfter', () => {
  it.each([
    { cursor: undefined, order: ['a', 'b', 'c'] },
    { cursor: 'a', order: ['b', 'c', 'a'] },
    { cursor: 'b', order: ['c', 'a', 'b'] },
    { cursor: 'bb', order: ['c', 'a', 'b'] }, // a cursor between names: the next name after it
    { cursor: 'c', order: ['a', 'b', 'c'] }, // none after it: from the start
    { cursor: '0', order: ['a', 'b', 'c'] }, // before every name
  ])('after $cursor: $order', ({ cursor, order }) => {
    expect(rotateAfter(names('a', 'b', 'c'), cursor).map((item) => item.name)).toEqual(order);
  });

  it('leaves its input as it was', () => {
    const input = names('a', 'b');
    rotateAfter(input, 'a');
    expect(input.map((item) => item.name)).toEqual(['a', 'b']);
    expect(rotateAfter([], 'a')).toEqual([]);
  });
});
