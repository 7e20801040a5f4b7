import type { StagingQueueRecord, StagingRegistry, TouchOutcome } from '../../lib/staging/staging-registry';

/**
 * The staging-queue registry in memory, for tests and benches in one process until the staging
 * helper's DynamoDB adapter lands. `reaping` marks a queue as the reaper's (touches refused).
 */
export function memoryStagingRegistry(): StagingRegistry & {
  reaping(target: string, queue: string, nowMs: number): void;
  reads: number;
} {
  const records = new Map<string, Map<string, StagingQueueRecord>>();
  const registry = {
    reads: 0,
    async touch(target: string, queue: string, nowMs: number): Promise<TouchOutcome> {
      const byQueue = records.get(target) ?? new Map<string, StagingQueueRecord>();
      records.set(target, byQueue);
      const record = byQueue.get(queue);
      if (record?.reapingAt !== undefined) return 'reaping';
      byQueue.set(queue, { target, queue, touchedAt: nowMs });
      return 'recorded';
    },
    async queuesOf(target: string): Promise<StagingQueueRecord[]> {
      registry.reads++;
      return [...(records.get(target)?.values() ?? [])].sort((a, b) => (a.queue < b.queue ? -1 : 1));
    },
    reaping(target: string, queue: string, nowMs: number) {
      const record = records.get(target)?.get(queue) ?? { target, queue, touchedAt: nowMs };
      records.set(target, (records.get(target) ?? new Map()).set(queue, { ...record, reapingAt: nowMs }));
    },
  };
  return registry;
}
