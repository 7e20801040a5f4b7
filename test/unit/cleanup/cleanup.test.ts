import { engineTuning, loadCleanupConfig } from '../../../lib/cleanup/config';
import { ConfigError } from '../../../lib/platform/errors';

const required = {
  CLEANUP_TABLE: 't',
  NXRG_DATABASE_URL: 'postgres://h/nxrg',
  OPENXDS_DATABASE_URL: 'postgres://h/xds',
};

describe('cleanup engine settings', () => {
  it('default to one step per invocation, 5 attempts, a 300 s lease, a 45 s budget and a 350 KB payload cap', () => {
    const config = loadCleanupConfig(required);
    expect(config).toMatchObject({ CLEANUP_DRY_RUN: false, CLEANUP_FUNCTION_TIMEOUT_SECONDS: 120 });
    expect(config.tuning).toEqual({
      maxAttempts: 5,
      leaseMs: 300_000,
      stepsPerInvocation: 1,
      timeBudgetMs: 45_000,
      maxPayloadBytes: 350_000,
      databaseTimeoutMs: 30_000,
    });
  });

  it.each([
    ['CLEANUP_FUNCTION_TIMEOUT_SECONDS', '9', 'CLEANUP_FUNCTION_TIMEOUT_SECONDS: must be at least 10'],
    ['CLEANUP_FUNCTION_TIMEOUT_SECONDS', '901', 'CLEANUP_FUNCTION_TIMEOUT_SECONDS: must be at most 900'],
    ['CLEANUP_DRY_RUN', 'yes', 'CLEANUP_DRY_RUN: must be true or false'],
  ])('reject %s=%s naming the variable', (name, value, problem) => {
    expect(() => loadCleanupConfig({ ...required, [name]: value })).toThrow(ConfigError);
    expect(() => loadCleanupConfig({ ...required, [name]: value })).toThrow(problem);
  });

  // Issue 12's guarantees, once checked between settings, hold for every timeout the schema accepts.
  it.each([10, 11, 45, 60, 61, 120, 300, 900])(
    'derive, from a %i s timeout, values that keep the guarantees',
    (timeout) => {
      const t = engineTuning(timeout);
      // A claim outlives any step of the invocation that took it: no two steps run one operation.
      expect(t.leaseMs).toBeGreaterThan(timeout * 1000);
      // A step started within the budget has a whole database timeout before the function's ends.
      expect(t.timeBudgetMs + t.databaseTimeoutMs).toBeLessThanOrEqual(timeout * 1000);
      expect(t.timeBudgetMs).toBeGreaterThan(0);
      expect(t.databaseTimeoutMs).toBeGreaterThan(0);
      // Below the shortest schedule (a minute): a schedule never finds the last step still running.
      expect(t.timeBudgetMs).toBeLessThan(60_000);
    },
  );
});
