import { deployedCleanup } from '../../../bench/lib/cleanup-deployed';
import { loadCleanupConfig } from '../../../lib/cleanup/config';
import { repositoryJobSchema, status90JobSchema } from '../../../lib/cleanup/jobs/config';
import { rateToMs, serviceFunctions } from '../../../local/service';

// The cleanup bench runs each job with what serverless.yml deploys by default, whatever its settings are named.
describe("the cleanup bench's deployed settings", () => {
  const functions = ['registryTimebasedCleanup', 'registryStatus90Cleanup', 'repositoryCleanup'];

  it.each(functions)('%s: its schedule, and its environment with the params resolved', (fn) => {
    const deployed = deployedCleanup(fn);
    const schedule = serviceFunctions().find((f) => f.name === fn)!.schedule!;
    expect(deployed.rate).toBe(schedule.rate);
    expect(deployed.intervalMs).toBe(rateToMs(schedule.rate));
    for (const value of Object.values(deployed.env)) expect(value).not.toMatch(/^$|\$\{|\[object/);
    // The table is a CloudFormation reference and the URLs default to empty: the bench sets them.
    expect(deployed.env).not.toHaveProperty('CLEANUP_TABLE');
    expect(deployed.env).not.toHaveProperty('NXRG_DATABASE_URL');
    // The engine's settings come as deployed (validated as at cold start).
    const local = { CLEANUP_TABLE: 't', NXRG_DATABASE_URL: 'postgres://db/n', OPENXDS_DATABASE_URL: 'postgres://db/o' };
    expect(() => loadCleanupConfig({ ...deployed.env, ...local })).not.toThrow();
  });

  it("names each job's own settings, not those every cleanup function shares", () => {
    const own = functions.map((fn) => Object.keys(deployedCleanup(fn).own));
    const shared = own[0]!.filter((name) => own[1]!.includes(name) && own[2]!.includes(name));
    expect(shared).toEqual([]);
    expect(own.flat()).not.toContain('CLEANUP_FUNCTION_TIMEOUT_SECONDS');
  });

  it.each([
    ['registryStatus90Cleanup', status90JobSchema],
    ['repositoryCleanup', repositoryJobSchema],
  ])('%s: carries every setting its job reads, with values it accepts', (fn, schema) => {
    const { env } = deployedCleanup(fn);
    expect(Object.keys(env)).toEqual(expect.arrayContaining(Object.keys(schema.shape)));
    expect(schema.safeParse(env).success).toBe(true);
  });

  it('refuses a function that serverless.yml does not schedule', () => {
    expect(() => deployedCleanup('noSuchCleanup')).toThrow(/noSuchCleanup/);
  });
});
