import { randomUUID } from 'node:crypto';
import type { DistributorConfig } from '../config/distributor';
import type { QueueInfo } from '../rabbitmq/management';
import { targetCapacity } from './capacity';
import { concurrencyLimit } from './concurrency';
import { groupByTarget, type TargetGroup } from './discovery';
import { moveMessages, type OpenChannel, type StopReason } from './mover';
import { type PlanQueue, planShares } from './planner';
import { createQueue, readyCounts } from './queueProbe';
import type { DistributorState } from './stateStore';
import { weightOf } from './weights';

export type PassSettings = Pick<
  DistributorConfig,
  | 'DISTRIBUTOR_PLANNER'
  | 'DISTRIBUTOR_DEFAULT_MAX_LENGTH'
  | 'DISTRIBUTOR_TARGETS'
  | 'DISTRIBUTOR_WEIGHTS'
  | 'DISTRIBUTOR_REFILL_THRESHOLD_PERCENT'
  | 'DISTRIBUTOR_MISSING_TARGET'
  | 'DISTRIBUTOR_NEW_TARGET_ARGUMENTS'
  | 'DISTRIBUTOR_MOVE_CONCURRENCY'
  | 'DISTRIBUTOR_MAX_PREFETCH'
  | 'DISTRIBUTOR_SAFETY_MARGIN_MS'
  | 'DISTRIBUTOR_IDLE_STOP_MS'
>;

/** What a pass needs from the outside world; tests pass real adapters on their own vhost and table. */
export interface DistributorDeps {
  settings: PassSettings;
  /** One paged management API listing of the vhost (ManagementClient.listQueues). */
  listQueues: () => Promise<QueueInfo[]>;
  /** A confirm channel on the pass's connection (AmqpSession.openConfirmChannel). */
  openChannel: OpenChannel;
  state: DistributorState;
  warn: (message: string, details: Record<string, unknown>) => void;
  now?: () => number;
}

export interface QueueSummary {
  name: string;
  depth: number;
  weight: number;
  planned: number;
  moved: number;
  requeued: number;
  stopReason?: StopReason;
  error?: string;
}

export type TargetOutcome = 'distributed' | 'leased-elsewhere' | 'target-missing' | 'below-threshold' | 'failed';

export interface TargetSummary {
  target: string;
  outcome: TargetOutcome;
  created: boolean;
  maxLength?: number;
  depth?: number;
  capacity?: number;
  planned: number;
  moved: number;
  requeued: number;
  queues: QueueSummary[];
  error?: string;
}

export interface PassSummary {
  owner: string;
  planner: PassSettings['DISTRIBUTOR_PLANNER'];
  durationMs: number;
  planned: number;
  moved: number;
  requeued: number;
  targets: TargetSummary[];
}

export interface Distributor {
  /** One distribution pass; `remainingMs` is the invocation's time left (context.getRemainingTimeInMillis()). */
  runPass(remainingMs: number): Promise<PassSummary>;
}

/** Builds the distributor from its settings and adapters (SPEC §3). */
export function createDistributor(deps: DistributorDeps): Distributor {
  const { settings, state, openChannel } = deps;
  const now = deps.now ?? Date.now;
  const weight = weightOf(settings.DISTRIBUTOR_WEIGHTS);

  async function distributeTarget(
    group: TargetGroup,
    pass: { owner: string; deadline: number; leaseUntil: number; limit: ReturnType<typeof concurrencyLimit> },
  ): Promise<TargetSummary> {
    const summary: TargetSummary = {
      target: group.target,
      outcome: 'leased-elsewhere',
      created: false,
      planned: 0,
      moved: 0,
      requeued: 0,
      queues: [],
    };
    const failed = (error: unknown) => {
      summary.outcome = 'failed';
      summary.error = (error as Error).message;
      deps.warn('Distribution to a target failed; the next pass retries it', {
        target: group.target,
        error: summary.error,
      });
      return summary;
    };
    try {
      if (!(await state.acquireLease(group.target, pass.owner, now(), pass.leaseUntil))) return summary;
    } catch (error) {
      return failed(error);
    }
    try {
      // Depths are read after the lease is held, exactly (AMQP), so a pass that just finished
      // on this target is seen in full: stale listing counts could overfill it.
      const targetSettings = settings.DISTRIBUTOR_TARGETS[group.target];
      let maxLengthArgument = group.targetQueue?.arguments['x-max-length'];
      let depth = (await readyCounts(openChannel, [group.target])).get(group.target);
      if (depth === undefined) {
        if (settings.DISTRIBUTOR_MISSING_TARGET === 'skip') {
          deps.warn('Staging queues have no target queue; skipped (DISTRIBUTOR_MISSING_TARGET=skip)', {
            target: group.target,
            staging: group.staging,
          });
          summary.outcome = 'target-missing';
          return summary;
        }
        const args = targetSettings?.arguments ?? settings.DISTRIBUTOR_NEW_TARGET_ARGUMENTS;
        await createQueue(openChannel, group.target, args);
        summary.created = true;
        maxLengthArgument = args['x-max-length'];
        depth = 0;
      }
      const capacity = targetCapacity({
        maxLengthArgument,
        configuredMaxLength: targetSettings?.maxLength,
        defaultMaxLength: settings.DISTRIBUTOR_DEFAULT_MAX_LENGTH,
        depth,
        refillThresholdPercent: settings.DISTRIBUTOR_REFILL_THRESHOLD_PERCENT,
      });
      Object.assign(summary, { maxLength: capacity.maxLength, depth, capacity: capacity.capacity });
      if (capacity.belowThreshold) {
        summary.outcome = 'below-threshold';
        return summary;
      }
      summary.outcome = 'distributed';
      if (capacity.capacity === 0) return summary;

      const depths = await readyCounts(openChannel, group.staging);
      const queues = group.staging
        .map((name) => ({ name, depth: depths.get(name) ?? 0, weight: weight(name) }))
        .filter((q) => q.depth > 0);
      const rotation = await state.readRotation(group.target);
      const plan = planShares({
        capacity: capacity.capacity,
        queues,
        mode: settings.DISTRIBUTOR_PLANNER,
        rotationCursor: rotation.cursor,
      });
      if (plan.rotationCursor !== undefined && plan.rotationCursor !== rotation.cursor) {
        if (!(await state.writeRotation(group.target, plan.rotationCursor, rotation))) {
          deps.warn("Rotation state changed under this pass; kept the other writer's", { target: group.target });
        }
      }
      summary.queues = await moveShares(group.target, queues, plan.shares, pass);
      const cutShort = summary.queues.filter((q) => q.stopReason === 'channel-closed');
      if (cutShort.length > 0) {
        deps.warn(
          'Moves ended early: the channel or connection closed; nothing is lost, the next pass moves the rest',
          {
            target: group.target,
            queues: cutShort.map((q) => q.name),
          },
        );
      }
      for (const q of summary.queues) {
        summary.planned += q.planned;
        summary.moved += q.moved;
        summary.requeued += q.requeued;
      }
      return summary;
    } catch (error) {
      return failed(error);
    } finally {
      // An unreleased lease only delays the next pass until it expires.
      await state.releaseLease(group.target, pass.owner).catch((error: Error) =>
        deps.warn('Could not release the lease; it expires by itself', {
          target: group.target,
          error: error.message,
        }),
      );
    }
  }

  /** Moves every planned share, at most `limit` at a time; resolves once every mover has ended. */
  function moveShares(
    target: string,
    queues: PlanQueue[],
    shares: { name: string; share: number }[],
    pass: { deadline: number; limit: ReturnType<typeof concurrencyLimit> },
  ): Promise<QueueSummary[]> {
    return Promise.all(
      shares.map(({ name, share }) =>
        pass.limit(async (): Promise<QueueSummary> => {
          const result = await moveMessages(openChannel, {
            source: name,
            target,
            count: share,
            prefetch: Math.min(share, settings.DISTRIBUTOR_MAX_PREFETCH),
            deadline: pass.deadline,
            idleStopMs: settings.DISTRIBUTOR_IDLE_STOP_MS,
          });
          return { ...queues.find((q) => q.name === name)!, planned: share, ...result };
        }),
      ),
    );
  }

  return {
    async runPass(remainingMs) {
      const startedAt = now();
      const owner = randomUUID();
      const deadline = startedAt + Math.max(0, remainingMs - settings.DISTRIBUTOR_SAFETY_MARGIN_MS);
      if (deadline === startedAt) {
        deps.warn('No time left for moves within the safety margin; only planning this pass', {
          remainingMs,
          safetyMarginMs: settings.DISTRIBUTOR_SAFETY_MARGIN_MS,
        });
      }
      const groups = groupByTarget(await deps.listQueues());
      const limit = concurrencyLimit(settings.DISTRIBUTOR_MOVE_CONCURRENCY);
      // A lease lasts as long as this invocation can: a killed pass frees its targets at its timeout.
      const pass = { owner, deadline, leaseUntil: startedAt + remainingMs, limit };
      const targets = await Promise.all(groups.map((group) => distributeTarget(group, pass)));
      return {
        owner,
        planner: settings.DISTRIBUTOR_PLANNER,
        durationMs: now() - startedAt,
        planned: targets.reduce((n, t) => n + t.planned, 0),
        moved: targets.reduce((n, t) => n + t.moved, 0),
        requeued: targets.reduce((n, t) => n + t.requeued, 0),
        targets,
      };
    },
  };
}
