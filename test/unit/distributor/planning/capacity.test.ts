import { type Capacity, type CapacityInput, targetCapacity } from '../../../../lib/distributor/planning/capacity';

const base: CapacityInput = {
  queueMaxLength: undefined,
  defaultMaxLength: 1000,
  depth: 0,
  refillThresholdPercent: 10,
};

/** What a case expects, in the order of Capacity's fields. */
type Expected = [
  maxLength: number,
  maxLengthFrom: Capacity['maxLengthFrom'],
  room: number,
  belowThreshold: boolean,
  capacity: number,
];

describe('targetCapacity', () => {
  it.each<[string, Partial<CapacityInput>, Expected]>([
    [
      'x-max-length wins over configuration',
      { queueMaxLength: 200, configuredMaxLength: 50 },
      [200, 'queue-limit', 200, false, 200],
    ],
    [
      'configuration when the queue has no x-max-length',
      { configuredMaxLength: 50, depth: 10 },
      [50, 'configuration', 40, false, 40],
    ],
    ['the default otherwise', { depth: 400 }, [1000, 'default', 600, false, 600]],
    [
      'a malformed x-max-length is ignored',
      { queueMaxLength: '200', configuredMaxLength: 70 },
      [70, 'configuration', 70, false, 70],
    ],
    ['a negative x-max-length is ignored', { queueMaxLength: -5 }, [1000, 'default', 1000, false, 1000]],
    ['a full target has no room', { queueMaxLength: 200, depth: 200 }, [200, 'queue-limit', 0, true, 0]],
    ['an overfull target is floored at 0', { queueMaxLength: 200, depth: 260 }, [200, 'queue-limit', 0, true, 0]],
    [
      'room just below the threshold: left alone',
      { queueMaxLength: 200, depth: 181 },
      [200, 'queue-limit', 19, true, 0],
    ],
    [
      'room exactly at the threshold: refilled',
      { queueMaxLength: 200, depth: 180 },
      [200, 'queue-limit', 20, false, 20],
    ],
    [
      'threshold 0 refills any room',
      { queueMaxLength: 200, depth: 199, refillThresholdPercent: 0 },
      [200, 'queue-limit', 1, false, 1],
    ],
    ['max length 0 takes nothing', { queueMaxLength: 0, refillThresholdPercent: 0 }, [0, 'queue-limit', 0, false, 0]],
  ])('%s', (_what, input, [maxLength, maxLengthFrom, room, belowThreshold, capacity]) => {
    expect(targetCapacity({ ...base, ...input })).toMatchObject({
      maxLength,
      maxLengthFrom,
      room,
      belowThreshold,
      capacity,
    });
  });
});
