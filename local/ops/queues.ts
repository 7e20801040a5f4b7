import type { z } from 'zod';
import { DISTRIBUTOR_TUNING, distributorSettingsSchema } from '../../lib/distributor/config';
import { targetCapacity } from '../../lib/distributor/planning/capacity';
import { planShares } from '../../lib/distributor/planning/planner';
import { stagedQueues } from '../../lib/distributor/planning/tenant-backlog';
import {
  byWork,
  controlledWeights,
  fairByOf,
  queueControl,
  type TenantControls,
  weighingOf,
} from '../../lib/distributor/planning/weights';
import { type RotationStore, rotationToPlan } from '../../lib/distributor/stores/rotation-store';
import { type Env, parseEnv } from '../../lib/platform/config';
import type { QueueInfo } from '../../lib/rabbitmq/management';
import { parseStagingQueueName } from '../../lib/staging/staging-names';

/** The distributor's settings without AMQP: the queue view reads the management API only. */
const queueSettingsSchema = distributorSettingsSchema.omit({ AMQP_URL: true });
export type QueueSettings = z.infer<typeof queueSettingsSchema>;
export const loadQueueSettings = (env: Env): QueueSettings => parseEnv(queueSettingsSchema, env);

export interface TargetView {
  target: string;
  exists: boolean;
  depth: number;
  maxLength: number;
  /** What the next pass may hand out (0 below the refill threshold). */
  capacity: number;
  stagingQueues: number;
  staged: number;
}

export interface StagingView {
  queue: string;
  target: string;
  tenant?: string;
  workflow?: string;
  depth: number;
  /** The weight the next pass plans with: 0 when paused, else a run-time control's, else the configured one. */
  weight: number;
  /** Paused with `fairway tenants pause`: the next pass moves nothing from it. */
  paused: boolean;
  /** Messages the next pass would move from it, by the distributor's own planner. */
  nextShare: number;
}

/**
 * Targets and staging queues as the next distribution pass would see them, planned with the
 * distributor's own capacity rule and planner. Depths come from the management listing (about
 * 5 s old), so the shares are what a pass would plan now, not a promise.
 */
export async function describeQueues(
  listing: readonly QueueInfo[],
  settings: Pick<
    QueueSettings,
    | 'DISTRIBUTOR_PLANNER'
    | 'DISTRIBUTOR_FAIR_BY'
    | 'DISTRIBUTOR_DEFAULT_MAX_LENGTH'
    | 'DISTRIBUTOR_TARGETS'
    | 'DISTRIBUTOR_WEIGHTS'
  >,
  state?: Pick<RotationStore, 'readRotation'>,
  controls: TenantControls = {},
): Promise<{ targets: TargetView[]; staging: StagingView[] }> {
  const weight = controlledWeights(weighingOf(settings.DISTRIBUTOR_WEIGHTS), controls);
  const planner = settings.DISTRIBUTOR_PLANNER;
  const byName = new Map(listing.map((q) => [q.name, q]));
  const staged = new Map<string, StagingView[]>();
  for (const queue of listing) {
    const parts = parseStagingQueueName(queue.name);
    if (!parts) continue;
    const views = staged.get(parts.target) ?? [];
    views.push({
      queue: queue.name,
      target: parts.target,
      ...(parts.tenant ? { tenant: parts.tenant } : {}),
      ...(parts.workflow ? { workflow: parts.workflow } : {}),
      depth: queue.messages_ready,
      weight: planner === 'tenant' ? weight(queue.name).workflow : weight(queue.name).queue,
      paused: queueControl(controls, queue.name).paused,
      nextShare: 0,
    });
    staged.set(parts.target, views);
  }
  const targets: TargetView[] = [];
  for (const [target, views] of [...staged].sort(([a], [b]) => a.localeCompare(b))) {
    views.sort((a, b) => a.queue.localeCompare(b.queue));
    const queue = byName.get(target);
    const capacity = targetCapacity({
      queueMaxLength: queue?.arguments['x-max-length'],
      configuredMaxLength: settings.DISTRIBUTOR_TARGETS[target]?.maxLength,
      defaultMaxLength: settings.DISTRIBUTOR_DEFAULT_MAX_LENGTH,
      depth: queue?.messages_ready ?? 0,
      refillThresholdPercent: DISTRIBUTOR_TUNING.refillThresholdPercent,
    });
    const backlog = views.filter((v) => v.depth > 0);
    if (queue && backlog.length > 0) {
      const rotation = await state?.readRotation(target);
      const fairBy = fairByOf(settings.DISTRIBUTOR_FAIR_BY);
      const sizes = Object.fromEntries(
        backlog.map((v) => [v.queue, (byName.get(v.queue)?.message_bytes_ready ?? 0) / v.depth]),
      );
      const queues = stagedQueues(
        backlog.map((v) => ({ name: v.queue, depth: v.depth })),
        {
          planner,
          fairBy,
          queueBytes: sizes,
          stagedMessageBytes: 0,
          ...(rotation?.costs ? { costs: rotation.costs } : {}),
        },
        weight,
      );
      const carried = rotation ? rotationToPlan(rotation) : {};
      const plan = planShares({
        capacity: capacity.capacity,
        queues,
        mode: planner,
        ...carried,
        ...(byWork(fairBy) ? { fairBy: 'work', deficits: carried.deficits ?? {} } : {}),
      });
      for (const { name, share } of plan.shares) views.find((v) => v.queue === name)!.nextShare = share;
    }
    targets.push({
      target,
      exists: queue !== undefined,
      depth: queue?.messages_ready ?? 0,
      maxLength: capacity.maxLength,
      capacity: queue ? capacity.capacity : 0,
      stagingQueues: views.length,
      staged: views.reduce((n, v) => n + v.depth, 0),
    });
  }
  return { targets, staging: [...staged.values()].flat() };
}
