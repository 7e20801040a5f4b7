export interface WeightRule {
  pattern: string;
  weight: number;
}

/**
 * Weight of a staging queue by the first rule whose pattern matches its full name, else 1.
 * Pattern syntax: `*` matches any characters except `/` (one tenant or workflow segment),
 * `**` matches any characters; everything else matches itself.
 * Example: `worker-input»/tenant1/*` matches every workflow of tenant1 on worker-input.
 */
export function weightOf(rules: readonly WeightRule[]): (queueName: string) => number {
  const compiled = rules.map((rule) => ({ regex: patternToRegex(rule.pattern), weight: rule.weight }));
  return (queueName) => compiled.find((rule) => rule.regex.test(queueName))?.weight ?? 1;
}

function patternToRegex(pattern: string): RegExp {
  const source = pattern
    .split('**')
    .map((part) =>
      part
        .split('*')
        .map((literal) => literal.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('[^/]*'),
    )
    .join('.*');
  return new RegExp(`^${source}$`);
}
