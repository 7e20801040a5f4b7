import {
  loadRepositoryJobConfig,
  loadStatus90JobConfig,
  loadTimebasedJobConfig,
} from '../../../lib/cleanup/jobs/config';
import { ConfigError } from '../../../lib/platform/errors';

const timebasedEnv = {
  NXRG_DOCUMENT_TYPES: 'referral',
  CLEANUP_TIMEBASED_DOCUMENT_TYPES: JSON.stringify({ referral: { retentionDays: 3650 } }),
};

/** The problems of the ConfigError that loading throws at cold start. */
function problems(load: () => unknown): readonly string[] {
  try {
    load();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError, but the configuration loaded');
}

// A misspelt name would fall back to the default table or column: the job would read (or delete in) the wrong one.
describe('table and column names (NXRG_NAMES, OPENXDS_NAMES) fail closed on an unknown key', () => {
  it.each([
    ['a misspelt column', { documents: { tabel: 'dokument' } }, 'NXRG_NAMES.documents.tabel: is not a known key'],
    ['a misspelt table group', { document: { table: 'dokument' } }, 'NXRG_NAMES.document: is not a known key'],
    ['an unknown citizens column', { citizens: { status90: 's' } }, 'NXRG_NAMES.citizens.status90: is not a known key'],
    [
      'an unknown deletion-record column',
      { deletedDocuments: { deletedOn: 'x' } },
      'NXRG_NAMES.deletedDocuments.deletedOn: is not a known key',
    ],
  ])('NXRG_NAMES with %s is a cold-start error naming the key, in every job', (_, names, problem) => {
    const env = { NXRG_NAMES: JSON.stringify(names) };
    expect(problems(() => loadTimebasedJobConfig({ ...timebasedEnv, ...env }))).toContain(problem);
    expect(problems(() => loadStatus90JobConfig(env))).toContain(problem);
    expect(problems(() => loadRepositoryJobConfig(env))).toContain(problem);
  });

  it.each([
    ['a misspelt column', { documents: { ID: 'xds_id' } }, 'OPENXDS_NAMES.documents.ID: is not a known key'],
    ['an unknown top-level key', { repository: {} }, 'OPENXDS_NAMES.repository: is not a known key'],
  ])('OPENXDS_NAMES with %s is a cold-start error naming the key', (_, names, problem) => {
    expect(problems(() => loadRepositoryJobConfig({ OPENXDS_NAMES: JSON.stringify(names) }))).toContain(problem);
  });

  it('names the key but never a value', () => {
    const found = problems(() => loadRepositoryJobConfig({ NXRG_NAMES: '{"documents":{"tabel":"s3cr3t_table"}}' }));
    expect(found.join(' ')).not.toContain('s3cr3t');
  });
});
