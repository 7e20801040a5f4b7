import type { Channel } from 'amqplib';
import type { QueueInfo } from '../../../lib/rabbitmq/management';
import { CachedStagingQueues, StagingQueueReapingError } from '../../../lib/routing/staging-queues';
import type { TouchOutcome } from '../../../lib/staging/staging-registry';

/** A broker that answers after a tick, so that a batch's lookups overlap as they do on the wire. */
function fakes(target: Partial<QueueInfo> = {}) {
  const lookups: string[] = [];
  const declared: string[] = [];
  const declaredWith: Record<string, unknown>[] = [];
  let channelsOpened = 0;
  const channel = {
    assertQueue: async (name: string, options: { arguments: Record<string, unknown> }) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      declared.push(name);
      declaredWith.push(options.arguments);
      return { queue: name, messageCount: 0, consumerCount: 0 };
    },
  } as unknown as Channel;
  const session = {
    sharedChannel: async () => {
      channelsOpened++;
      return channel;
    },
    openChannel: async () => {
      throw new Error('these declares never fail: no channel of their own');
    },
  };
  const management = {
    getQueue: async (name: string): Promise<QueueInfo | undefined> => {
      lookups.push(name);
      await new Promise((resolve) => setTimeout(resolve, 5));
      return { name, durable: true, auto_delete: false, arguments: {}, messages: 0, messages_ready: 0, ...target };
    },
    listPolicies: async () => {
      lookups.push('(policies)');
      await new Promise((resolve) => setTimeout(resolve, 5));
      return { policies: [], operatorPolicies: [] };
    },
  };
  return { session, management, lookups, declared, declaredWith, channelsOpened: () => channelsOpened };
}

describe('CachedStagingQueues', () => {
  it('makes one shape lookup and one policy listing for concurrent cache misses of one target', async () => {
    const f = fakes();
    const queues = new CachedStagingQueues(f.session, f.management, {}, 60_000, { stagingQueueKept: () => undefined });
    const staging = Array.from({ length: 10 }, (_, i) => `target»/tenant${i}/workflow`);
    await Promise.all(staging.map((name) => queues.ensure(name, 'target')));
    expect(f.lookups.sort()).toEqual(['(policies)', 'target']);
    expect(f.declared.sort()).toEqual([...staging].sort());
  });

  it.each([
    ['classic', { 'x-max-priority': 10 }, { 'x-max-priority': 10, 'x-queue-type': 'classic' }],
    ['quorum', {}, { 'x-queue-type': 'classic' }],
    ['quorum', { 'x-queue-type': 'quorum' }, { 'x-queue-type': 'classic' }],
    ['classic', { 'x-queue-type': 'classic', 'x-max-priority': 5 }, { 'x-queue-type': 'classic', 'x-max-priority': 5 }],
  ])(
    "declares a %s target's staging queues classic by name, its type listed in its arguments or not (%j)",
    async (type, args, staged) => {
      const f = fakes({ type, arguments: args });
      const queues = new CachedStagingQueues(
        f.session,
        f.management,
        {},
        60_000,
        { stagingQueueKept: () => undefined },
        { priorities: 'copy' },
      );
      await queues.ensure('target»/t', 'target');
      expect(f.declaredWith).toEqual([{ ...staged, 'x-overflow': 'reject-publish' }]);
    },
  );

  it('looks a target up again once a failed lookup ended', async () => {
    const f = fakes();
    let fail = true;
    const management = {
      getQueue: async (name: string) => {
        f.lookups.push(name);
        if (fail) throw new Error('management API down');
        return f.management.getQueue(name);
      },
      listPolicies: f.management.listPolicies,
    };
    const queues = new CachedStagingQueues(f.session, management, {}, 60_000, { stagingQueueKept: () => undefined });
    const first = await Promise.allSettled([
      queues.ensure('target»/a/w', 'target'),
      queues.ensure('target»/b/w', 'target'),
    ]);
    expect(first.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(f.lookups.filter((name) => name === 'target')).toHaveLength(1);
    fail = false;
    await queues.ensure('target»/a/w', 'target');
    expect(f.declared).toEqual(['target»/a/w']);
  });

  describe('the registry touch (issue 24, item 4)', () => {
    const setUp = (answer: TouchOutcome = 'recorded') => {
      const f = fakes();
      const touches: { target: string; queue: string; at: number }[] = [];
      let now = 1_000_000;
      const registry = {
        touch: async (target: string, queue: string, at: number) => {
          touches.push({ target, queue, at });
          return answer;
        },
      };
      const queues = new CachedStagingQueues(
        f.session,
        f.management,
        {},
        60_000,
        { stagingQueueKept: () => undefined },
        { registry, touchPeriodMs: 600_000, now: () => now },
      );
      return { f, queues, touches, advance: (ms: number) => (now += ms) };
    };

    it('touches a queue when it first declares it, then at most once per touch period, not per declare', async () => {
      const { f, queues, touches, advance } = setUp();
      await queues.ensure('target»/a', 'target');
      expect(touches).toEqual([{ target: 'target', queue: 'target»/a', at: 1_000_000 }]);
      for (let minute = 1; minute < 10; minute++) {
        advance(60_000); // every cache period: declared again, not touched
        await queues.ensure('target»/a', 'target');
      }
      expect(f.declared).toHaveLength(10);
      expect(touches).toHaveLength(1);
      advance(60_000);
      await queues.ensure('target»/a', 'target');
      expect(touches.map((t) => t.at)).toEqual([1_000_000, 1_600_000]);
    });

    it('touches after a declare under way that did not touch, when the touch fell due meanwhile', async () => {
      const { queues, touches, advance } = setUp();
      await queues.ensure('target»/a', 'target');
      advance(599_999); // the declare is due again (cache period), the touch not yet
      const declaring = queues.ensure('target»/a', 'target');
      advance(1);
      await Promise.all([declaring, queues.ensure('target»/a', 'target')]);
      expect(touches.map((t) => t.at)).toEqual([1_000_000, 1_600_000]);
    });

    it('touches again after a returned publish made it forget the queue', async () => {
      const { queues, touches } = setUp();
      await queues.ensure('target»/a', 'target');
      queues.forget('target»/a');
      await queues.ensure('target»/a', 'target');
      expect(touches).toHaveLength(2);
    });

    it('refuses a queue the reaper holds, and keeps asking on each ensure', async () => {
      const { queues, touches } = setUp('reaping');
      await expect(queues.ensure('target»/a', 'target')).rejects.toThrow(StagingQueueReapingError);
      await expect(queues.ensure('target»/a', 'target')).rejects.toThrow(/being deleted as unused/);
      expect(touches).toHaveLength(2);
    });

    it('fails the ensure when the registry cannot be written', async () => {
      const f = fakes();
      const registry = {
        touch: async () => {
          throw new Error('DynamoDB down');
        },
      };
      const queues = new CachedStagingQueues(
        f.session,
        f.management,
        {},
        60_000,
        { stagingQueueKept: () => undefined },
        { registry, touchPeriodMs: 600_000 },
      );
      await expect(queues.ensure('target»/a', 'target')).rejects.toThrow('DynamoDB down');
    });
  });
});
