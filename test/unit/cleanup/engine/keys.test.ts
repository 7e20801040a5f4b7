import {
  deadLetterPartition,
  FILL_PREFIX,
  fillGeneration,
  fillKey,
  isFillKey,
  MAX_CHILDREN_PER_PUSH,
  OPERATION_PREFIX,
  operationKey,
  SEQUENCE_KEY,
  stackPartition,
} from '../../../../lib/cleanup/engine/keys';

// The stored layout of a stack (keys.ts): a change strands the items a deployed job already wrote.
describe('stack item keys as stored', () => {
  it('are fixed-width, so that string order is push order', () => {
    expect(operationKey(12, 3)).toBe('op#000000000012#000003');
    expect(operationKey(1, MAX_CHILDREN_PER_PUSH)).toBe('op#000000000001#999999');
    expect(fillKey(7)).toBe('fill#000000000007');
    expect([OPERATION_PREFIX, FILL_PREFIX, SEQUENCE_KEY]).toEqual(['op#', 'fill#', 'seq']);
    expect(MAX_CHILDREN_PER_PUSH).toBe(999_999);
  });

  it('put a job in its own partition and its dead letters in another', () => {
    expect(stackPartition('registry-status90-cleanup')).toBe('registry-status90-cleanup');
    expect(deadLetterPartition('registry-status90-cleanup')).toBe('registry-status90-cleanup#dead');
  });

  it('tell a fill from an operation, and give back its generation', () => {
    expect(isFillKey(fillKey(42))).toBe(true);
    expect(isFillKey(operationKey(42, 0))).toBe(false);
    expect(fillGeneration(fillKey(42))).toBe(42);
  });
});
