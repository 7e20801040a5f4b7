import { RE2JS } from 're2js';

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
  return (queueName) => {
    let best: { specificity: number; weight: number } | undefined;
    for (const rule of compiled) {
      const specificity = rule.specificity(queueName);
      if (specificity === undefined) continue;
      if (!best || specificity > best.specificity || (specificity === best.specificity && rule.weight > best.weight)) {
        best = { specificity, weight: rule.weight };
      }
    }
    return best?.weight ?? 1;
  };
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
