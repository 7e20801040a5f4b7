import { parseStagingQueueName } from '../../staging/staging-names';
import type { QueueWeight, Weighing, WeightRule } from './weights';

/** What an operator set at run time for a tenant or one of its workflows (`fairway tenants`). */
export interface TenantControl {
  /** The distributor moves nothing from the matching staging queues; their messages stay where they are. */
  paused?: boolean;
  /** Overrides the configured weight rules (0–1000, as DISTRIBUTOR_WEIGHTS). */
  weight?: number;
}

/**
 * Controls by key: `tenant`, or `tenant/workflow` for one workflow of a tenant. Read only own keys
 * (`controlOf`): a tenant may be called `__proto__` or `constructor`.
 */
export type TenantControls = Readonly<Record<string, TenantControl>>;

/** The control set for `key`, if any: never a property the record inherits. */
export const controlOf = (controls: TenantControls, key: string): TenantControl | undefined =>
  Object.hasOwn(controls, key) ? controls[key] : undefined;

/** Reads the controls once per pass; the CLI writes them. */
export interface TenantControlStore {
  /** The controls in force; an entry that is not well formed is left out. Rejects when none can be read. */
  read(): Promise<TenantControls>;
}

/** What applies to one staging queue: its paused flag and the control's weight, if any. */
export interface QueueControl {
  paused: boolean;
  weight?: number;
}

/**
 * The controls that apply to a staging queue `target»/tenant[/workflow…]`: the workflow's key is
 * more specific than the tenant's, so its weight wins; a pause of either pauses the queue. A
 * tenant-less queue `target»/workflow` reads as tenant `workflow` (the name cannot tell them apart).
 */
export function queueControl(controls: TenantControls, queueName: string): QueueControl {
  const parts = parseStagingQueueName(queueName);
  if (!parts?.tenant) return { paused: false };
  const tenant = controlOf(controls, parts.tenant);
  const workflow = parts.workflow === undefined ? undefined : controlOf(controls, `${parts.tenant}/${parts.workflow}`);
  const weight = workflow?.weight ?? tenant?.weight;
  return {
    paused: Boolean(tenant?.paused || workflow?.paused),
    ...(weight === undefined ? {} : { weight }),
  };
}

/**
 * The weight a pass plans with: 0 for a paused queue (it gets no share and the others share its
 * room), else the control's weight, else the configured rules'.
 */
export function controlledWeight(
  configured: (queueName: string) => number,
  controls: TenantControls,
): (queueName: string) => number {
  return (queueName) => {
    const control = queueControl(controls, queueName);
    if (control.paused) return 0;
    return control.weight ?? configured(queueName);
  };
}

/**
 * The weights a pass plans with at every level: `controlledWeight` for the queue's own; at the two
 * levels a tenant's control weighs (or pauses) the tenant and a workflow's control the workflow
 * within its tenant, each over the configured rules of its level.
 */
export function controlledWeights(configured: Weighing, controls: TenantControls): (queueName: string) => QueueWeight {
  const queue = controlledWeight(configured.queue, controls);
  return (queueName) => {
    const parts = parseStagingQueueName(queueName);
    const tenant = parts?.tenant === undefined ? undefined : controlOf(controls, parts.tenant);
    const workflow =
      parts?.tenant === undefined || parts.workflow === undefined
        ? undefined
        : controlOf(controls, `${parts.tenant}/${parts.workflow}`);
    const levels = configured.levels(queueName);
    return {
      queue: queue(queueName),
      tenant: tenant?.paused ? 0 : (tenant?.weight ?? levels.tenant),
      workflow: workflow?.paused ? 0 : (workflow?.weight ?? levels.workflow),
    };
  };
}

/**
 * Whether a staging queue, one no pass has seen yet included, may weigh 0 under these rules and
 * controls: a control pauses a tenant or workflow or weighs it 0, or a configured rule weighs 0.
 * Fail closed, for the grant rule: a tenant's first staging queue on a target may not exist when
 * the pass measures the target, and its first messages would then go direct, past the pause.
 */
export function someQueueMayWeighZero(rules: readonly WeightRule[], controls: TenantControls): boolean {
  return rules.some((rule) => rule.weight === 0) || Object.values(controls).some(weighsZero);
}

/** Whether a control (or a change to one) gives its staging queues no share: paused, or weight 0. */
export const weighsZero = (control: { paused?: boolean; weight?: number | null }): boolean =>
  control.paused === true || control.weight === 0;
