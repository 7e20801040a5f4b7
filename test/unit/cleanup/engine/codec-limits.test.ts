import { z } from 'zod';
import { decodeOperation, encodeChildren, RejectedChildError } from '../../../../lib/cleanup/engine/codec';
import type { JobDefinition, Operation } from '../../../../lib/cleanup/engine/job-definition';
import { MAX_CHILDREN_PER_PUSH } from '../../../../lib/cleanup/engine/keys';

const kinds: JobDefinition['kinds'] = {
  leaf: { payload: z.object({}), execute: async () => undefined },
  anything: { payload: z.any(), execute: async () => undefined },
};

function rejection(encode: () => unknown): RejectedChildError {
  try {
    encode();
  } catch (error) {
    if (error instanceof RejectedChildError) return error;
    throw error;
  }
  throw new Error('expected a RejectedChildError');
}

describe('the stack codec at its limits', () => {
  it(`takes ${MAX_CHILDREN_PER_PUSH} children in one push and refuses one more, saying what to do`, () => {
    // Sparse: only the count is under test, and a million real children would take seconds to encode.
    const children: Operation[] = new Array(MAX_CHILDREN_PER_PUSH);
    expect(encodeChildren('page', children, kinds, 100)).toHaveLength(MAX_CHILDREN_PER_PUSH);
    children.push({ kind: 'leaf', payload: {} });
    const error = rejection(() => encodeChildren('page', children, kinds, 100));
    expect(error.name).toBe('RejectedChildError');
    expect(error.message).toBe(
      `operation kind "page" supplied ${MAX_CHILDREN_PER_PUSH + 1} children; at most ${MAX_CHILDREN_PER_PUSH} ` +
        'fit one push: return a page of them and a continuation operation',
    );
  });

  it('takes a payload of exactly the cap', () => {
    const payload = { id: 'x'.repeat(100 - '{"id":""}'.length) };
    expect(encodeChildren('s', [{ kind: 'anything', payload }], kinds, 100)).toEqual([
      { kind: 'anything', payload: JSON.stringify(payload) },
    ]);
  });

  it('refuses a payload that is not JSON, naming the child', () => {
    const error = rejection(() => encodeChildren('s', [{ kind: 'anything', payload: undefined }], kinds, 100));
    expect(error.message).toBe('operation kind "s" supplied child 0 of kind "anything" whose payload is not JSON');
  });

  it('names an item without a kind "(none)" when it sets it aside', () => {
    expect(decodeOperation({ sk: 'op#1', payload: '{}' }, kinds)).toMatchObject({ ok: false, kind: '(none)' });
    expect(decodeOperation({ sk: 'op#1', kind: 'leaf' }, kinds)).toMatchObject({ ok: false, kind: 'leaf' });
  });
});
