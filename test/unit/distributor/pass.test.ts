import { loadDistributorConfig } from '../../../lib/distributor/config';
import { createDistributor } from '../../../lib/distributor/pass';
import type { DistributorReport } from '../../../lib/distributor/report';
import type { LeaseStore } from '../../../lib/distributor/stores/lease-store';
import type { QueueInfo } from '../../../lib/rabbitmq/management';
import { distributorSettings } from '../../../lib/wiring/distributor';
import { noControls } from '../../harness/distributor-tenant-controls';

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
    const failures: unknown[] = [];
    const report: DistributorReport = {
      targetFailed: (target, error) => failures.push({ target, error }),
      targetMissing: jest.fn(),
      rotationConflict: jest.fn(),
      movesCutShort: jest.fn(),
      leaseNotReleased: jest.fn(),
      waitsNotRecorded: jest.fn(),
      reapFailed: jest.fn(),
      noTimeToMove: jest.fn(),
      backstopListed: jest.fn(),
      executionEnded: jest.fn(),
      controlsUnreadable: jest.fn(),
      controlSkipped: jest.fn(),
      lengthTuned: jest.fn(),
      boardFailed: jest.fn(),
      passed: jest.fn(),
    };
    const openChannel = jest.fn();
    const state: LeaseStore = {
      acquireLease: async (target) => {
        if (target === 'a') throw new Error('DynamoDB throttled');
        return false;
      },
      releaseLease: jest.fn(),
    };
    const distributor = createDistributor({
      settings: distributorSettings(
        loadDistributorConfig({
          DISTRIBUTOR_TABLE: 't',
          AMQP_URL: 'amqp://h',
          RABBITMQ_MANAGEMENT_URL: 'http://h',
        }),
      ),
      listQueues: async () => [queue('a', 0), queue('a»/t1', 5), queue('b»/t1', 7)],
      openChannel,
      listPolicies: async () => ({ policies: [], operatorPolicies: [] }),
      leases: state,
      rotations: { readRotation: jest.fn(), writeRotation: jest.fn() },
      publisherUser: 'guest',
      controls: noControls,
      tuning: { rate: jest.fn(), lengths: { read: jest.fn(), write: jest.fn() } },
      report,
    });

    const summary = await distributor.runPass(60_000);
    expect(summary.targets.map((t) => [t.target, t.outcome, t.error])).toEqual([
      ['a', 'failed', 'Error: DynamoDB throttled'],
      ['b', 'leased-elsewhere', undefined],
    ]);
    expect(summary.moved).toBe(0);
    expect(openChannel).not.toHaveBeenCalled();
    expect(state.releaseLease).not.toHaveBeenCalled();
    expect(failures).toEqual([{ target: 'a', error: new Error('DynamoDB throttled') }]);
    expect(report.passed).toHaveBeenCalledWith(summary);
    for (const other of ['targetMissing', 'rotationConflict', 'leaseNotReleased', 'noTimeToMove'] as const) {
      expect(report[other]).not.toHaveBeenCalled();
    }
  });
});
