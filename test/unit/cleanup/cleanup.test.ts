import { loadCleanupConfig } from '../../../lib/cleanup/config';
import { ConfigError } from '../../../lib/platform/errors';

const required = {
  CLEANUP_TABLE: 't',
  NXRG_DATABASE_URL: 'postgres://h/nxrg',
  OPENXDS_DATABASE_URL: 'postgres://h/xds',
};

describe('cleanup engine settings', () => {
  it('default to one step per invocation, 5 attempts, a 300 s lease, a 45 s budget and a 350 KB payload cap', () => {
    expect(loadCleanupConfig(required)).toMatchObject({
      CLEANUP_DRY_RUN: false,
      CLEANUP_MAX_ATTEMPTS: 5,
      CLEANUP_LEASE_SECONDS: 300,
      CLEANUP_STEPS_PER_INVOCATION: 1,
      CLEANUP_TIME_BUDGET_SECONDS: 45,
      CLEANUP_MAX_PAYLOAD_BYTES: 350_000,
    });
  });

  it.each([
    ['CLEANUP_MAX_ATTEMPTS', '0', 'CLEANUP_MAX_ATTEMPTS: must be at least 1'],
    ['CLEANUP_LEASE_SECONDS', 'soon', 'CLEANUP_LEASE_SECONDS: must be an integer'],
    ['CLEANUP_STEPS_PER_INVOCATION', '0', 'CLEANUP_STEPS_PER_INVOCATION: must be at least 1'],
    ['CLEANUP_MAX_PAYLOAD_BYTES', '400000', 'CLEANUP_MAX_PAYLOAD_BYTES: must be at most 390000'],
  ])('reject %s=%s naming the variable', (name, value, problem) => {
    expect(() => loadCleanupConfig({ ...required, [name]: value })).toThrow(ConfigError);
    expect(() => loadCleanupConfig({ ...required, [name]: value })).toThrow(problem);
  });
});
