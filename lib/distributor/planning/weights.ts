import { RE2JS } from 're2js';
import { DISCRIMINATOR_SEPARATOR, parseStagingQueueName, STAGING_SEPARATOR } from '../../staging/staging-names';

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
