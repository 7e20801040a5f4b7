import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadCleanupConfig } from '../../../lib/cleanup/config';
import { loadTimebasedJobConfig } from '../../../lib/cleanup/jobs/config';
import { documentedDeployParams } from '../../harness/documented-deploy';

/**
 * The deploy command in docs/deploying.md is one a reader can copy: its `--param`s, mapped to
 * environment variables as serverless.yml maps them, pass the cleanup functions' cold-start checks.
 */
const root = join(__dirname, '../../..');

function exampleEnvironment(): Record<string, string> {
  const variableOf = new Map(
    [...readFileSync(join(root, 'serverless.yml'), 'utf8').matchAll(/^\s*([A-Z][A-Z0-9_]*): \$\{param:(\w+)\}/gm)].map(
      (m) => [m[2]!, m[1]!],
    ),
  );
  const env: Record<string, string> = {};
  for (const [param, value] of Object.entries(documentedDeployParams())) {
    const variable = variableOf.get(param);
    if (variable !== undefined) env[variable] = value;
  }
  return env;
}

describe('docs/deploying.md', () => {
  it('gives the time-based cleanup document types and retention it accepts', () => {
    const env = exampleEnvironment();
    expect(env.NXRG_DOCUMENT_TYPES).toBeDefined();
    expect(loadTimebasedJobConfig(env).documentTypes.length).toBeGreaterThan(0);
  });

  it('gives the cleanup functions database URLs they accept', () => {
    expect(() => loadCleanupConfig({ ...exampleEnvironment(), CLEANUP_TABLE: 'stacks' })).not.toThrow();
  });
});
