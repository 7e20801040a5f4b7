import { RE2JS } from 're2js';
import { ConfigError } from '../../platform/errors';
import { DISCRIMINATOR_SEPARATOR, parseStagingQueueName, STAGING_SEPARATOR } from '../../staging/staging-names';

/** Weights have at most this many decimals; the distributor's planner works in whole thousandths. */
export const WEIGHT_DECIMALS = 3;

/**
 * A weight rule: `pattern` is a glob that must match the whole staging queue name; `regex` is a
 * regular expression searched for anywhere in it, as upstream's CAF_ADJUST_QUEUE_WEIGHT.
 */
export type WeightRule = { pattern: string; weight: number } | { regex: string; weight: number };

interface CompiledRule {
  weight: number;
  /** How much of `queueName` the rule pins down, or undefined when it does not match. */
  specificity(queueName: string): number | undefined;
}

/**
 * Weight of a staging queue by its most specific matching rule, else 1 (upstream's
 * fast-lane-processing.md): the longest match wins and, between matches of equal length, the
 * higher weight. A regex's match length is the longest substring it matches; a glob's is its
 * literal characters (a glob always spans the whole name). Weight 0 means the queue gets no share.
 *
 * Glob syntax: `*` matches any characters except `/` (one tenant or workflow segment), `**`
 * matches any characters, everything else matches itself.
 * Example: `worker-input»/tenant1/*` matches every workflow of tenant1 on worker-input.
 */
export function weightOf(rules: readonly WeightRule[]): (queueName: string) => number {
  const compiled = rules.map(compile);
  return (queueName) => bestOf(compiled, [queueName]) ?? 1;
}

/** A staging queue's weights at the tenant planner's two levels. */
export interface LevelWeights {
  /** Its tenant's weight among the target's tenants. */
  tenant: number;
  /** Its weight among its tenant's staging queues. */
  workflow: number;
}

/**
 * The two-level weights of a staging queue (the `tenant` planner): a rule that matches whatever
 * the workflow (it matches the tenant's own queue `target»/tenant`, or `target»/tenant/»`, a name
 * no workflow can have) weighs the tenant; a rule that matches the queue otherwise weighs it within
 * its tenant. Each level by its most specific rule, as `weightOf`, else 1. So
 * `worker-input»/tenant1/*` weighs tenant1, the regex `/report$` weighs every tenant's `report` workflow
 * within its tenant. A tenant-less queue `target»/workflow` is read as tenant `workflow`.
 */
export function levelWeightsOf(rules: readonly WeightRule[]): (queueName: string) => LevelWeights {
  const compiled = rules.map(compile);
  return (queueName) => {
    const parts = parseStagingQueueName(queueName);
    if (!parts?.tenant) return { tenant: bestOf(compiled, [queueName]) ?? 1, workflow: 1 };
    const own = parts.target + STAGING_SEPARATOR + DISCRIMINATOR_SEPARATOR + parts.tenant;
    const probes = [own, own + DISCRIMINATOR_SEPARATOR + STAGING_SEPARATOR];
    const tenantRules = compiled.filter((rule) => probes.some((probe) => rule.specificity(probe) !== undefined));
    const workflowRules = compiled.filter((rule) => !tenantRules.includes(rule));
    return { tenant: bestOf(tenantRules, probes) ?? 1, workflow: bestOf(workflowRules, [queueName]) ?? 1 };
  };
}

/** A staging queue's weights as a pass plans with them: its own (`queue`, `reference`) and its two levels (`tenant`). */
export interface QueueWeight extends LevelWeights {
  queue: number;
}

/** The configured rules compiled once for both kinds of planner. */
export interface Weighing {
  queue: (queueName: string) => number;
  levels: (queueName: string) => LevelWeights;
}

export const weighingOf = (rules: readonly WeightRule[]): Weighing => ({
  queue: weightOf(rules),
  levels: levelWeightsOf(rules),
});

/** The configured weights of a staging queue at every level, without run-time controls. */
export function configuredWeights(rules: readonly WeightRule[]): (queueName: string) => QueueWeight {
  const { queue, levels } = weighingOf(rules);
  return (queueName) => ({ queue: queue(queueName), ...levels(queueName) });
}

/** The weight of the most specific rule matching any of `names` (a tie to the higher weight), or undefined. */
function bestOf(rules: readonly CompiledRule[], names: readonly string[]): number | undefined {
  let best: { specificity: number; weight: number } | undefined;
  for (const rule of rules) {
    for (const name of names) {
      const specificity = rule.specificity(name);
      if (specificity === undefined) continue;
      if (!best || specificity > best.specificity || (specificity === best.specificity && rule.weight > best.weight)) {
        best = { specificity, weight: rule.weight };
      }
    }
  }
  return best?.weight;
}

function compile(rule: WeightRule): CompiledRule {
  if ('regex' in rule) {
    // RE2's linear-time engine: a rule such as `(a+)+$` cannot hold the pass (a backtracking engine
    // took exponential time on a 41-character name). The configuration refuses what RE2 cannot run.
    const regex = RE2JS.compile(rule.regex);
    return {
      weight: rule.weight,
      specificity(queueName) {
        let longest: number | undefined;
        const matches = regex.matcher(queueName);
        while (matches.find()) longest = Math.max(longest ?? 0, matches.group()?.length ?? 0);
        return longest;
      },
    };
  }
  const regex = globToRegex(rule.pattern);
  const literals = rule.pattern.replaceAll('*', '').length;
  return { weight: rule.weight, specificity: (queueName) => (regex.matches(queueName) ? literals : undefined) };
}

/** A glob as an RE2 expression of the whole name: `**a**a**b` would backtrack polynomially in a backtracking engine. */
function globToRegex(pattern: string): RE2JS {
  const source = pattern
    .split('**')
    .map((part) =>
      part
        .split('*')
        .map((literal) => RE2JS.quote(literal))
        .join('[^/]*'),
    )
    .join('.*');
  return RE2JS.compile(source);
}

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

/**
 * What tenants' shares are equal in (DISTRIBUTOR_FAIR_BY, docs/distributor.md "Fair by work"):
 * messages; bytes (a message weighs its body size); or a cost the producers declare in a header
 * (a positive number; a message without one weighs `missing`).
 */
export type FairBy = { unit: 'messages' } | { unit: 'bytes' } | { unit: 'declared'; header: string; missing: number };

const DECLARED = /^header:([^=\s]+)(?:=(.+))?$/;

/** Why DISTRIBUTOR_FAIR_BY's text is not a FairBy (the cold start's check), or undefined when it is one. Pure. */
export function fairByError(text: string): string | undefined {
  const parsed = parseFairBy(text);
  return 'error' in parsed ? parsed.error : undefined;
}

/** DISTRIBUTOR_FAIR_BY's text as a FairBy; a text fairByError refuses throws a ConfigError. */
export function fairByOf(text: string): FairBy {
  const parsed = parseFairBy(text);
  if ('error' in parsed) throw new ConfigError([`DISTRIBUTOR_FAIR_BY ${parsed.error}`]);
  return parsed;
}

function parseFairBy(text: string): FairBy | { error: string } {
  if (text === 'messages' || text === 'bytes') return { unit: text };
  const declared = DECLARED.exec(text);
  if (!declared) return { error: 'must be messages, bytes, or header:<name>[=<cost of a message without it>]' };
  const missing = declared[2] === undefined ? 1 : Number(declared[2]);
  if (!Number.isFinite(missing) || missing <= 0) {
    return { error: `the cost after "=" must be a positive number (got ${JSON.stringify(declared[2])})` };
  }
  return { unit: 'declared', header: declared[1]!, missing };
}

/** The work one message brings in the unit: 1, its body bytes, or its declared cost. Pure. */
export const messageWork =
  (fairBy: FairBy) =>
  (message: { content: { length: number }; properties: { headers?: Record<string, unknown> } }): number => {
    if (fairBy.unit === 'messages') return 1;
    if (fairBy.unit === 'bytes') return message.content.length;
    return declaredCost(message.properties.headers?.[fairBy.header]) ?? fairBy.missing;
  };

/** A header's value as a cost: a positive finite number, or a string of one (AMQP clients send both). */
function declaredCost(value: unknown): number | undefined {
  const cost =
    typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  return Number.isFinite(cost) && cost > 0 ? cost : undefined;
}

/** Shares are equal in work (bytes or a declared cost), not in messages: the planner carries deficits, the movers count work. */
export const byWork = (fairBy: FairBy | undefined): fairBy is Exclude<FairBy, { unit: 'messages' }> =>
  fairBy !== undefined && fairBy.unit !== 'messages';

/** What the movers count of each moved message when shares are equal in work; undefined by messages. */
export const workCounter = (fairBy: FairBy | undefined) => (byWork(fairBy) ? messageWork(fairBy) : undefined);
