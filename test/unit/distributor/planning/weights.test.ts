import { loadDistributorConfig } from '../../../../lib/distributor/config';
import { weightOf } from '../../../../lib/distributor/planning/weights';
import { ConfigError } from '../../../../lib/platform/errors';

const config = (weights: unknown) =>
  loadDistributorConfig({
    DISTRIBUTOR_TABLE: 't',
    AMQP_URL: 'amqp://h',
    RABBITMQ_MANAGEMENT_URL: 'http://h',
    DISTRIBUTOR_WEIGHTS: JSON.stringify(weights),
  });

/**
 * The examples of upstream's fast-lane-processing.md (worker-message-prioritization-distribution-container),
 * each `CAF_ADJUST_QUEUE_WEIGHT*` tag as one `regex` rule.
 */
describe('weight rules: upstream fast-lane-processing.md examples', () => {
  const documented = config([
    { regex: 'enrichment\\-workflow$', weight: 10 },
    { regex: 'tenant1', weight: 0 },
    { regex: 'tenant2', weight: 3 },
    { regex: 'dataprocessing-langdetect-in', weight: 7 },
    { regex: 'repository-initialization-workflow$', weight: 0.5 },
    { regex: 'tenant3', weight: 0.5 },
  ]).DISTRIBUTOR_WEIGHTS;
  const weight = weightOf(documented);

  it.each([
    // "tenant1" and "enrichment-workflow" both match: the longer match (enrichment-workflow) wins.
    ['dataprocessing-classification-in»/tenant1/enrichment-workflow', 10],
    ['dataprocessing-classification-in»/tenant1/other-workflow', 0],
    ['any-in»/tenant2/w', 3],
    // the target name is the longest match (28 characters) over tenant2 and enrichment-workflow
    ['dataprocessing-langdetect-in»/tenant2/enrichment-workflow', 7],
    ['any-in»/tenant3/repository-initialization-workflow', 0.5],
    ['any-in»/tenant3/w', 0.5],
    ['any-in»/tenant4/w', 1],
  ])('%s weighs %d', (name, expected) => expect(weight(name)).toBe(expected));

  it('the doc’s precedence example: tenant1 = 3, enrichment-workflow = 10 gives 10', () => {
    const rules = config([
      { regex: 'tenant1', weight: 3 },
      { regex: 'enrichment-workflow', weight: 10 },
    ]).DISTRIBUTOR_WEIGHTS;
    expect(weightOf(rules)('dataprocessing-classification-in»/tenant1/enrichment-workflow')).toBe(10);
  });

  it('two matches of equal length: the higher weight wins, whatever the order', () => {
    const rules = [
      { regex: 'tenantA', weight: 2 },
      { regex: 'workflA', weight: 5 },
    ];
    expect(weightOf(rules)('q»/tenantA/workflA')).toBe(5);
    expect(weightOf([...rules].reverse())('q»/tenantA/workflA')).toBe(5);
  });

  it.each([
    ['a negative weight', [{ regex: 'tenant1', weight: -7 }], 'DISTRIBUTOR_WEIGHTS: Too small'],
    ['more than three decimals', [{ regex: 'tenant1', weight: 0.0005 }], 'DISTRIBUTOR_WEIGHTS: must have at most 3'],
    ['a regex that does not compile', [{ regex: 'tenant(', weight: 1 }], 'DISTRIBUTOR_WEIGHTS: is not a valid regular'],
    ['a weight over 1000', [{ pattern: 'q»/*', weight: 1001 }], 'DISTRIBUTOR_WEIGHTS: Too big'],
  ])('refuses %s at cold start, saying why', (_, rules, reason) => {
    expect(() => config(rules)).toThrow(ConfigError);
    expect(() => config(rules)).toThrow(reason);
  });
});

describe('weight rules: globs by the same precedence', () => {
  it('a glob counts its literal characters: the more specific glob wins whatever the order', () => {
    const rules = [
      { pattern: 'worker-in»/**', weight: 2 },
      { pattern: 'worker-in»/vip/*', weight: 5 },
    ];
    expect(weightOf(rules)('worker-in»/vip/w')).toBe(5);
    expect(weightOf([...rules].reverse())('worker-in»/vip/w')).toBe(5);
    expect(weightOf(rules)('worker-in»/other/w')).toBe(2);
  });

  it('a glob and a regex compete by match length', () => {
    const weight = weightOf([
      { pattern: 'q»/t/*', weight: 2 },
      { regex: 'enrichment-workflow', weight: 9 },
    ]);
    expect(weight('q»/t/enrichment-workflow')).toBe(9);
    expect(weight('q»/t/w')).toBe(2);
  });
});

/** Issue 23 item 6: a rule that backtracks catastrophically in a backtracking engine matches in linear time here. */
describe('weight rules run in time linear in the name', () => {
  const timed = (run: () => void) => {
    const started = performance.now();
    run();
    return performance.now() - started;
  };

  it.each([
    ['(a+)+$', `q»/${'a'.repeat(38)}!`],
    ['(a|aa)*b', `q»/${'a'.repeat(250)}`],
    ['(\\w*)*x', `worker-input»/${'tenant'.repeat(40)}`],
  ])('%s against a %#-th hostile name of 41+ characters answers at once', (regex, name) => {
    const weight = weightOf(config([{ regex, weight: 2 }]).DISTRIBUTOR_WEIGHTS);
    expect(timed(() => expect(weight(name)).toBe(1))).toBeLessThan(200);
    expect(weight(`q»/${'a'.repeat(3)}`)).toBe(regex === '(a+)+$' ? 2 : 1);
  });

  it('a glob of many ** against a long name answers at once too', () => {
    const weight = weightOf(config([{ pattern: '**a**a**a**a**a**a**a**b', weight: 2 }]).DISTRIBUTOR_WEIGHTS);
    expect(timed(() => expect(weight(`q»/${'a'.repeat(250)}`)).toBe(1))).toBeLessThan(200);
    expect(weight('q»/aaaaaaab')).toBe(2);
  });

  it('refuses at cold start, naming DISTRIBUTOR_WEIGHTS, what a linear-time engine cannot run (backreferences, lookaround)', () => {
    for (const regex of ['(a)\\1', 'tenant(?=1)', '(?<!x)tenant']) {
      expect(() => config([{ regex, weight: 2 }])).toThrow(/DISTRIBUTOR_WEIGHTS: .*linear-time/);
    }
  });
});
