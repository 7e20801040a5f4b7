import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import {
  loadRepositoryJobConfig,
  loadStatus90JobConfig,
  loadTimebasedJobConfig,
  repositoryJobSchema,
  status90JobSchema,
  timebasedJobSchema,
} from '../../../lib/cleanup/jobs/config';
import { ConfigError } from '../../../lib/platform/errors';

interface Template {
  params: { default: Record<string, unknown> };
  functions: Record<string, { environment: Record<string, unknown> }>;
}
const template = parse(readFileSync(join(__dirname, '../../../serverless.yml'), 'utf8'), {
  merge: true,
}) as Template;

/** A function's environment as deployed with the default params (`${param:x}` resolved). */
function deployedEnv(fn: string): Record<string, string> {
  return Object.fromEntries(
    Object.entries(template.functions[fn]!.environment).map(([key, value]) => [
      key,
      String(value).replace(/\$\{param:(\w+)\}/g, (_, name: string) => String(template.params.default[name])),
    ]),
  );
}

// serverless.yml carries every job setting, and the defaults deployed there pass cold-start validation.
describe('cleanup job settings in serverless.yml', () => {
  it.each([
    ['registryTimebasedCleanup', timebasedJobSchema],
    ['registryStatus90Cleanup', status90JobSchema],
    ['repositoryCleanup', repositoryJobSchema],
  ])('%s sets every variable its job reads', (fn, schema) => {
    expect(Object.keys(deployedEnv(fn))).toEqual(expect.arrayContaining(Object.keys(schema.shape)));
  });

  it('status90 and repository cleanups start with the deployed defaults', () => {
    expect(() => loadStatus90JobConfig(deployedEnv('registryStatus90Cleanup'))).not.toThrow();
    expect(() => loadRepositoryJobConfig(deployedEnv('repositoryCleanup'))).not.toThrow();
  });

  it('the time-based cleanup refuses to start until its document types and retentions are configured', () => {
    const env = deployedEnv('registryTimebasedCleanup');
    expect(() => loadTimebasedJobConfig(env)).toThrow(ConfigError);
    const configured = {
      ...env,
      NXRG_DOCUMENT_TYPES: 'referral',
      CLEANUP_TIMEBASED_DOCUMENT_TYPES: '{"referral":{"retentionDays":3650}}',
    };
    expect(loadTimebasedJobConfig(configured).documentTypes).toHaveLength(1);
  });
});
