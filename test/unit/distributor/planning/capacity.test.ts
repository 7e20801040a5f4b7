import { type CapacityInput, targetCapacity } from '../../../../lib/distributor/planning/capacity';

const base: CapacityInput = {
  queueMaxLength: undefined,
  defaultMaxLength: 1000,
  depth: 0,
  refillThresholdPercent: 10,
};

describe('targetCapacity', () => {
  it.each<
    [
      string,
      Partial<CapacityInput>,
      { maxLength: number; maxLengthFrom: string; room: number; belowThreshold: boolean; capacity: number },
    ]
  >([
    [
      'x-max-length wins over configuration',
      { queueMaxLength: 200, configuredMaxLength: 50 },
      { maxLength: 200, maxLengthFrom: 'queue-limit', room: 200, belowThreshold: false, capacity: 200 },
    ],
    [
      'configuration when the queue has no x-max-length',
      { configuredMaxLength: 50, depth: 10 },
      { maxLength: 50, maxLengthFrom: 'configuration', room: 40, belowThreshold: false, capacity: 40 },
    ],
    [
      'the default otherwise',
      { depth: 400 },
      { maxLength: 1000, maxLengthFrom: 'default', room: 600, belowThreshold: false, capacity: 600 },
    ],
    [
      'a malformed x-max-length is ignored',
      { queueMaxLength: '200', configuredMaxLength: 70 },
      { maxLength: 70, maxLengthFrom: 'configuration', room: 70, belowThreshold: false, capacity: 70 },
    ],
    [
      'a negative x-max-length is ignored',
      { queueMaxLength: -5 },
      { maxLength: 1000, maxLengthFrom: 'default', room: 1000, belowThreshold: false, capacity: 1000 },
    ],
    [
      'a full target has no room',
      { queueMaxLength: 200, depth: 200 },
      { maxLength: 200, maxLengthFrom: 'queue-limit', room: 0, belowThreshold: true, capacity: 0 },
    ],
    [
      'an overfull target is floored at 0',
      { queueMaxLength: 200, depth: 260 },
      { maxLength: 200, maxLengthFrom: 'queue-limit', room: 0, belowThreshold: true, capacity: 0 },
    ],
    [
      'room just below the threshold: left alone',
      { queueMaxLength: 200, depth: 181 },
      { maxLength: 200, maxLengthFrom: 'queue-limit', room: 19, belowThreshold: true, capacity: 0 },
    ],
    [
      'room exactly at the threshold: refilled',
      { queueMaxLength: 200, depth: 180 },
      { maxLength: 200, maxLengthFrom: 'queue-limit', room: 20, belowThreshold: false, capacity: 20 },
    ],
    [
      'threshold 0 refills any room',
      { queueMaxLength: 200, depth: 199, refillThresholdPercent: 0 },
      { maxLength: 200, maxLengthFrom: 'queue-limit', room: 1, belowThreshold: false, capacity: 1 },
    ],
    [
      'max length 0 takes nothing',
      { queueMaxLength: 0, refillThresholdPercent: 0 },
      { maxLength: 0, maxLengthFrom: 'queue-limit', room: 0, belowThreshold: false, capacity: 0 },
    ],
  ])('%s', (_what, input, expected) => {
    expect(targetCapacity({ ...base, ...input })).toMatchObject(expected);
  });
});
