import { byTenant, type Failed, type Pending } from './pending';
import type { TenantCounterStore } from './priority/counter-store';
import type { PriorityMapping } from './priority/rules';

export interface PriorityCheck {
  counters: TenantCounterStore;
  priorityOf: PriorityMapping;
  /** The level of a tenant-less message (the quiet level of SPEC §1): it never counts against a tenant. */
  quietLevel: number;
}

/**
 * Sets each record's priority level and AMQP priority (SPEC §1). The k events of one tenant are k
 * checks in batch order, in one write; tenants run in parallel. A tenant-less event takes the
 * quiet level without a check: there is no counter to charge. A tenant whose check failed fails
 * all its records.
 */
export async function checkPriorities(
  check: PriorityCheck,
  pending: readonly Pending[],
  nowMs: number,
): Promise<Failed> {
  const failed: Failed = new Map();
  for (const item of pending) {
    if (item.message.tenantId !== undefined) continue;
    item.priorityLevel = check.quietLevel;
    item.amqpPriority = check.priorityOf(check.quietLevel);
  }
  await Promise.all(
    [...byTenant(pending)].map(async ([tenantId, items]) => {
      try {
        const { levels } = await check.counters.check(tenantId, items.length, nowMs);
        items.forEach((item, i) => {
          item.priorityLevel = levels[i]!;
          item.amqpPriority = check.priorityOf(levels[i]!);
        });
      } catch (error) {
        for (const item of items) failed.set(item, { kind: 'PriorityFailures', error });
      }
    }),
  );
  return failed;
}
