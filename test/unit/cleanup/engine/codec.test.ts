import fc from 'fast-check';
import { z } from 'zod';
import {
  decodeOperation,
  encodeChildren,
  placeChildren,
  RejectedChildError,
} from '../../../../lib/cleanup/engine/codec';
import type { JobDefinition } from '../../../../lib/cleanup/engine/job-definition';
import { fillKey, operationKey } from '../../../../lib/cleanup/engine/keys';

const kinds: JobDefinition['kinds'] = {
  batch: { payload: z.object({ ids: z.array(z.number()) }), execute: async () => undefined },
};

describe('stack keys', () => {
  it('order operations by push sequence, then position, so a descending read takes the newest first', () => {
    const keys = [operationKey(2, 0), operationKey(10, 3), operationKey(10, 12), operationKey(1, 999_999)];
    expect([...keys].sort().reverse()).toEqual([
      operationKey(10, 12),
      operationKey(10, 3),
      operationKey(2, 0),
      operationKey(1, 999_999),
    ]);
    expect(fillKey(9) < fillKey(10)).toBe(true);
  });
});

describe('encodeChildren', () => {
  it('encodes valid children as JSON', () => {
    expect(encodeChildren('supplier', [{ kind: 'batch', payload: { ids: [1, 2] } }], kinds, 100)).toEqual([
      { kind: 'batch', payload: '{"ids":[1,2]}' },
    ]);
  });

  it.each([
    [{ kind: 'nope', payload: {} }, 'operation kind "supplier" supplied child 0 of unknown kind "nope"'],
    [{ kind: 'constructor', payload: {} }, 'supplied child 0 of unknown kind "constructor"'],
    [{ kind: 'batch', payload: { ids: ['x'] } }, 'supplied child 0 of kind "batch" with an invalid payload'],
    [
      { kind: 'batch', payload: { ids: Array.from({ length: 40 }, (_, i) => i) } },
      'whose payload is 119 bytes; the cap is 100 bytes',
    ],
  ])('rejects %j with a clear error', (child, message) => {
    expect(() => encodeChildren('supplier', [child], kinds, 100)).toThrow(RejectedChildError);
    expect(() => encodeChildren('supplier', [child], kinds, 100)).toThrow(message);
  });
});

describe('placeChildren', () => {
  const children = Array.from({ length: 30 }, (_, i) => ({ kind: 'batch', payload: `{"ids":[${i}]}` }));

  it('places every child once under the plan sequence, in an order only the seed decides', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e9 }), fc.integer({ min: 0, max: 2 ** 32 - 1 }), (sequence, seed) => {
        const placed = placeChildren(children, { sequence, shuffleSeed: seed }, 'op#parent');
        expect(placed.map((p) => p.sk)).toEqual(children.map((_, i) => operationKey(sequence, i)));
        expect(placed.map((p) => p.payload).sort()).toEqual(children.map((c) => c.payload).sort());
        expect(new Set(placed.map((p) => p.parent))).toEqual(new Set(['op#parent']));
        // A retry with the same plan writes the same children under the same keys.
        expect(placeChildren(children, { sequence, shuffleSeed: seed }, 'op#parent')).toEqual(placed);
      }),
    );
    const orders = new Set(
      [1, 2, 3].map((seed) =>
        placeChildren(children, { sequence: 1, shuffleSeed: seed }, 'p')
          .map((c) => c.payload)
          .join(),
      ),
    );
    expect(orders.size).toBe(3);
  });
});

describe('decodeOperation', () => {
  it('returns the validated payload of a well-formed item', () => {
    expect(decodeOperation({ sk: 'op#1', kind: 'batch', payload: '{"ids":[3]}' }, kinds)).toMatchObject({
      ok: true,
      kind: 'batch',
      payload: { ids: [3] },
    });
  });

  it.each([
    [{ sk: 'op#1', payload: '{}' }, 'stored item is malformed'],
    [{ sk: 'op#1', kind: 'batch', payload: 7 }, 'stored item is malformed'],
    [{ sk: 'op#1', kind: 'gone', payload: '{}' }, 'unknown operation kind "gone"'],
    [{ sk: 'op#1', kind: 'toString', payload: '{}' }, 'unknown operation kind "toString"'],
    [{ sk: 'op#1', kind: 'batch', payload: '{"ids":' }, 'payload of kind "batch" is not valid JSON'],
    [{ sk: 'op#1', kind: 'batch', payload: '{"ids":"x"}' }, 'payload of kind "batch" is invalid'],
  ])('sets aside %j with an error instead of crashing', (item, error) => {
    const decoded = decodeOperation(item, kinds);
    expect(decoded.ok).toBe(false);
    expect(decoded.ok === false && decoded.error).toContain(error);
  });
});
