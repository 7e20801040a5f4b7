import { loadDistributorConfig } from '../../../lib/config/distributor';
import { createDistributor } from '../../../lib/distributor/pass';
import type { DistributorState } from '../../../lib/distributor/stateStore';
import type { QueueInfo } from '../../../lib/rabbitmq/management';

const queue = (name: string, ready: number): QueueInfo => ({
  name,
  durable: true,
  auto_delete: false,
  arguments: {},
  messages: ready,
  messages_ready: ready,
});

describe('createDistributor: targets it cannot lease', () => {
  it('reports a lease store failure on that target alone and skips a target leased elsewhere, touching no queue', async () => {
    const warnings: unknown[] = [];
    const openChannel = jest.fn();
    const state: DistributorState = {
      acquireLease: async (target) => {
        if (target === 'a') throw new Error('DynamoDB throttled');
        return false;
      },
      releaseLease: jest.fn(),
      readRotation: jest.fn(),
      writeRotation: jest.fn(),
    };
    const distributor = createDistributor({
      settings: loadDistributorConfig({
        DISTRIBUTOR_TABLE: 't',
        AMQP_URL: 'amqp://h',
        RABBITMQ_MANAGEMENT_URL: 'http://h',
      }),
      listQueues: async () => [queue('a', 0), queue('a»/t1', 5), queue('b»/t1', 7)],
      openChannel,
      state,
      warn: (message, details) => warnings.push({ message, details }),
    });

    const summary = await distributor.runPass(60_000);
    expect(summary.targets.map((t) => [t.target, t.outcome, t.error])).toEqual([
      ['a', 'failed', 'DynamoDB throttled'],
      ['b', 'leased-elsewhere', undefined],
    ]);
    expect(summary.moved).toBe(0);
    expect(openChannel).not.toHaveBeenCalled();
    expect(state.releaseLease).not.toHaveBeenCalled();
    expect(warnings).toEqual([
      { message: expect.stringContaining('failed'), details: { target: 'a', error: 'DynamoDB throttled' } },
    ]);
  });
});
