import { groupByTarget } from '../../../../lib/distributor/planning/tenant-backlog';
import { weightOf } from '../../../../lib/distributor/planning/weights';
import type { QueueInfo } from '../../../../lib/rabbitmq/management';

const queue = (name: string, ready: number, args: Record<string, unknown> = {}): QueueInfo => ({
  name,
  durable: true,
  auto_delete: false,
  arguments: args,
  messages: ready,
  messages_ready: ready,
  message_bytes_ready: ready * 10,
});

describe('groupByTarget', () => {
  it('groups staging queues with ready messages by target, with the listed target, in name order', () => {
    const target = queue('worker-input', 3, { 'x-max-length': 200 });
    const groups = groupByTarget([
      queue('worker-input»/t2', 5),
      target,
      queue('worker-input»/t1/w', 1),
      queue('worker-input»/idle', 0),
      queue('other»/t1', 7),
      queue('unrelated', 50),
    ]);
    expect(groups).toEqual([
      {
        target: 'other',
        targetQueue: undefined,
        staging: ['other»/t1'],
        stagedMessageBytes: 10,
        queueBytes: { 'other»/t1': 10 },
      },
      {
        target: 'worker-input',
        targetQueue: target,
        staging: ['worker-input»/t1/w', 'worker-input»/t2'],
        stagedMessageBytes: 10,
        // Each staging queue's average size, for shares fair by bytes.
        queueBytes: { 'worker-input»/t1/w': 10, 'worker-input»/t2': 10 },
      },
    ]);
  });

  it('leaves out targets whose staging queues are all empty', () => {
    expect(groupByTarget([queue('a', 0), queue('a»/t1', 0)])).toEqual([]);
  });
});

describe('weightOf', () => {
  const weight = weightOf([
    { pattern: 'worker-input»/vip/*', weight: 5 },
    { pattern: 'worker-input»/big', weight: 3 },
    { pattern: '**»/bulk/**', weight: 2 },
  ]);
  it.each([
    ['worker-input»/vip/w1', 5],
    ['worker-input»/vip', 1],
    ['worker-input»/vip/w1/x', 1],
    ['worker-input»/big', 3],
    ['worker-input»/bigger', 1],
    ['other»/bulk/w/x', 2],
    ['worker-input»/t1', 1],
  ])('%s weighs %d', (name, expected) => expect(weight(name)).toBe(expected));

  it('matches regex characters literally', () => {
    expect(weightOf([{ pattern: 'a.b»/(t)+', weight: 4 }])('a.b»/(t)+')).toBe(4);
    expect(weightOf([{ pattern: 'a.b»/(t)+', weight: 4 }])('axb»/tt')).toBe(1);
  });
});
