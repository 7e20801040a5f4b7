import { z } from 'zod';
import { type Env, parseEnv } from '../../lib/platform/config';
import { stagingLifecycleSettings } from '../../lib/settings/common';
import { parseStagingQueueName } from '../../lib/staging/staging-names';
import type { ReapingRegistry } from '../../lib/staging/staging-registry';

/** How many staging queues exist (by the listing) and how many were reaped (by the registry), per target and in all. */
export interface StagingCounts {
  stagingQueues: number;
  reaped: number;
  byTarget: { target: string; stagingQueues: number; reaped: number }[];
}

/** The registry's table when the environment names one (STAGING_TABLE), read as the functions read it. */
export const stagingTableOf = (env: Env): string | undefined =>
  parseEnv(z.object(stagingLifecycleSettings), env).STAGING_TABLE;

/** Counts the listing's staging queues and the registry's reaped totals; without a registry, none reaped. */
export async function stagingCounts(
  listing: readonly { name: string }[],
  registry?: Pick<ReapingRegistry, 'reapedCounts'>,
): Promise<StagingCounts> {
  const reapedBy = registry ? await registry.reapedCounts() : {};
  const existing = new Map<string, number>();
  for (const { name } of listing) {
    const target = parseStagingQueueName(name)?.target;
    if (target !== undefined) existing.set(target, (existing.get(target) ?? 0) + 1);
  }
  const targets = [...new Set([...existing.keys(), ...Object.keys(reapedBy)])].sort();
  const byTarget = targets.map((target) => ({
    target,
    stagingQueues: existing.get(target) ?? 0,
    reaped: reapedBy[target] ?? 0,
  }));
  return {
    stagingQueues: byTarget.reduce((n, t) => n + t.stagingQueues, 0),
    reaped: byTarget.reduce((n, t) => n + t.reaped, 0),
    byTarget,
  };
}
