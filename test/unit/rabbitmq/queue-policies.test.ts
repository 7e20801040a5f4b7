import { effectiveLengthLimits, howLimitsDrop, type Policy } from '../../../lib/rabbitmq/queue-policies';

const policy = (definition: Record<string, unknown>, extra: Partial<Policy> = {}): Policy => ({
  name: 'p',
  pattern: '»',
  applyTo: 'queues',
  priority: 0,
  definition,
  ...extra,
});
const staging = (type: string | undefined, args: Record<string, unknown> = { 'x-overflow': 'reject-publish' }) => ({
  name: 'target»/tenant',
  type,
  arguments: args,
});
const limits = (queue: ReturnType<typeof staging>, policies: Policy[], operatorPolicies: Policy[] = []) =>
  effectiveLengthLimits(queue, { policies, operatorPolicies });

describe('effectiveLengthLimits: RabbitMQ resolution of arguments, policy and operator policy', () => {
  it('the smallest of argument, policy and operator policy', () => {
    const resolved = limits(
      staging('classic', { 'x-max-length': 50, 'x-max-length-bytes': 10 }),
      [policy({ 'max-length': 5, 'max-length-bytes': 100 }, { name: 'user' })],
      [policy({ 'max-length': 7 }, { name: 'operator' })],
    );
    expect(resolved).toEqual({
      maxLength: 5,
      maxLengthBytes: 10,
      overflow: 'drop-head',
      policies: ['user', 'operator'],
    });
  });

  it("a classic queue's x-overflow wins over a policy's overflow; a quorum queue's policy wins over its argument", () => {
    const dropping = [policy({ 'max-length': 5, overflow: 'drop-head' })];
    expect(limits(staging('classic'), dropping).overflow).toBe('reject-publish');
    expect(limits(staging('quorum'), dropping).overflow).toBe('drop-head');
    // Unknown type (declared without x-queue-type): the worse of the two.
    expect(limits(staging(undefined), dropping).overflow).toBe('drop-head');
    expect(limits(staging(undefined), [policy({ 'max-length': 5 })]).overflow).toBe('reject-publish');
  });

  it('an operator policy overflow wins over a policy overflow (RabbitMQ 3.12 and later)', () => {
    expect(
      limits(staging('quorum'), [policy({ overflow: 'reject-publish' })], [policy({ overflow: 'drop-head' })]).overflow,
    ).toBe('drop-head');
  });

  it('a quorum queue reads reject-publish-dlx as drop-head; a classic one keeps it', () => {
    expect(limits(staging('quorum', { 'x-overflow': 'reject-publish-dlx' }), []).overflow).toBe('drop-head');
    expect(limits(staging('classic', { 'x-overflow': 'reject-publish-dlx' }), []).overflow).toBe('reject-publish-dlx');
  });

  it('a classic queue takes the matching policy of highest priority only; ties count the worst', () => {
    const high = policy({}, { name: 'high', priority: 10 });
    const low = policy({ 'max-length': 1 }, { name: 'low', priority: 1 });
    expect(limits(staging('classic', {}), [high, low])).toEqual({ overflow: 'drop-head', policies: ['high'] });
    const tie = policy({ 'max-length': 3, overflow: 'drop-head' }, { name: 'tie', priority: 10 });
    expect(limits(staging('classic', {}), [high, tie])).toMatchObject({ maxLength: 3, policies: ['high', 'tie'] });
    // A quorum queue may skip the higher one (a key it does not support): every match counts.
    expect(limits(staging('quorum', {}), [high, low])).toMatchObject({ maxLength: 1 });
  });

  it('matches patterns on the name as RabbitMQ does, and counts a pattern JavaScript cannot compile as matching', () => {
    expect(limits(staging('classic', {}), [policy({ 'max-length': 1 }, { pattern: '^target»/t' })]).maxLength).toBe(1);
    expect(
      limits(staging('classic', {}), [policy({ 'max-length': 1 }, { pattern: '^other' })]).maxLength,
    ).toBeUndefined();
    // "»" is two bytes: two dots match it, as in the broker's byte-wise PCRE.
    expect(limits(staging('classic', {}), [policy({ 'max-length': 1 }, { pattern: '^target../' })]).maxLength).toBe(1);
    expect(limits(staging('classic', {}), [policy({ 'max-length': 1 }, { pattern: '(?i)TARGET' })]).maxLength).toBe(1);
  });

  it('applies a policy by its apply-to', () => {
    const only = (applyTo: string) => [policy({ 'max-length': 1 }, { applyTo })];
    expect(limits(staging('classic', {}), only('exchanges')).maxLength).toBeUndefined();
    expect(limits(staging('classic', {}), only('all')).maxLength).toBe(1);
    expect(limits(staging('classic', {}), only('quorum_queues')).maxLength).toBeUndefined();
    expect(limits(staging('quorum', {}), only('quorum_queues')).maxLength).toBe(1);
    expect(limits(staging(undefined, {}), only('classic_queues')).maxLength).toBe(1);
  });
});

describe('howLimitsDrop', () => {
  it('names the limits that drop waiting messages, and nothing when there is no limit or the queue rejects', () => {
    expect(howLimitsDrop({ maxLength: 5, maxLengthBytes: 9, overflow: 'drop-head', policies: [] })).toBe(
      'max-length 5 and max-length-bytes 9 with overflow drop-head',
    );
    expect(howLimitsDrop({ overflow: 'drop-head', policies: [] })).toBeUndefined();
    expect(howLimitsDrop({ maxLength: 5, overflow: 'reject-publish', policies: [] })).toBeUndefined();
  });
});
