import { randomUUID } from 'node:crypto';
import type { PassRequestEvent } from '../pass-requests/pass-trigger';
import type { QueueInfo } from '../rabbitmq/management';
import type { QueuePolicies } from '../rabbitmq/queue-policies';
import { channelSlots } from './moving/channel-slots';
import { groupByTarget } from './planning/discovery';
import { moveCostModel } from './planning/move-costs';
import { controlledWeight, type TenantControlStore, type TenantControls } from './planning/tenant-controls';
import { weightOf } from './planning/weights';
import type { PassSummary } from './report';
import { type Pass, type TargetPassDeps, targetPass } from './target-pass';

/** What a pass needs from the outside world; tests pass real adapters on their own vhost and table. */
export interface DistributorDeps extends TargetPassDeps {
  /** One paged management API listing of the vhost (ManagementClient.listQueues). */
  listQueues: () => Promise<QueueInfo[]>;
  /** The vhost's policies and operator policies (ManagementClient.listPolicies). */
  listPolicies: () => Promise<QueuePolicies>;
  /** Operators' run-time controls (`fairway tenants pause|resume|weight`), read once per pass. */
  controls: TenantControlStore;
}

export interface Distributor {
  /**
   * One distribution pass; `remainingMs` is the invocation's time left (context.getRemainingTimeInMillis()).
   * With a `request`, the pass covers its target alone.
   */
  runPass(remainingMs: number, request?: PassRequestEvent): Promise<PassSummary>;
}

/**
 * Builds the distributor from its settings and adapters (SPEC §3): a pass lists the vhost, reads
 * the tenant controls, and runs every target's part of it (target-pass.ts) at once.
 */
export function createDistributor(deps: DistributorDeps): Distributor {
  const { settings, openChannel, report } = deps;
  const now = deps.now ?? Date.now;
  const configuredWeight = weightOf(settings.weights);
  // Learned over the container's passes: a pass moves only what fits before its deadline.
  const distributeTarget = targetPass(deps, moveCostModel(settings.moveConcurrency));
  // The controls of the last pass that could read them: an unreadable item never stops distribution.
  let lastControls: TenantControls = {};
  const readControls = () =>
    deps.controls.read().then(
      (controls) => (lastControls = controls),
      (error: unknown) => {
        report.controlsUnreadable(error);
        return lastControls;
      },
    );

  return {
    async runPass(remainingMs, request) {
      const startedAt = now();
      const owner = randomUUID();
      const deadline = startedAt + Math.max(0, remainingMs - settings.safetyMarginMs);
      if (deadline === startedAt) report.noTimeToMove(remainingMs, settings.safetyMarginMs);
      const [listing, controls] = await Promise.all([deps.listQueues(), readControls()]);
      // A requested pass looks at its target's every staging queue: the listed counts lag the router by ~5 s.
      const groups = request
        ? groupByTarget(listing, request.target).filter((group) => group.target === request.target)
        : groupByTarget(listing);
      // The targets' effective limits come from these; a pass with nothing to move does not ask.
      const policies = groups.length > 0 ? await deps.listPolicies() : { policies: [], operatorPolicies: [] };
      // A lease lasts as long as this invocation can: a killed pass frees its targets at its timeout.
      const slots = channelSlots(settings.moveConcurrency, openChannel);
      const pass: Pass = {
        owner,
        deadline,
        leaseUntil: startedAt + remainingMs,
        slots,
        policies,
        weight: controlledWeight(configuredWeight, controls),
        request,
      };
      const targets = await Promise.all(groups.map((group) => distributeTarget(group, pass))).finally(() =>
        slots.close(),
      );
      const summary: PassSummary = {
        owner,
        ...(request
          ? { request: { requestId: request.requestId, target: request.target, delayMs: request.delayMs } }
          : {}),
        planner: settings.planner,
        durationMs: now() - startedAt,
        planned: targets.reduce((n, t) => n + t.planned, 0),
        moved: targets.reduce((n, t) => n + t.moved, 0),
        requeued: targets.reduce((n, t) => n + t.requeued, 0),
        parked: targets.reduce((n, t) => n + t.parked, 0),
        targets,
      };
      report.passed(summary);
      return summary;
    },
  };
}
