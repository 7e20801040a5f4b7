import {
  loadRepositoryJobConfig,
  loadStatus90JobConfig,
  loadTimebasedJobConfig,
} from '../../../lib/cleanup/jobs/config';
import { ConfigError } from '../../../lib/platform/errors';

const TYPES = JSON.stringify({
  referral: { retentionDays: 3650 },
  'lab-result': { retentionDays: 1825, basis: 'service', batchSize: 500 },
});
const timebasedEnv = {
  NXRG_DOCUMENT_TYPES: 'referral, lab-result,prescription',
  CLEANUP_TIMEBASED_DOCUMENT_TYPES: TYPES,
};

function problems(load: () => unknown): string[] {
  try {
    load();
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('cleanup job configuration', () => {
  it('reads document types with their retention rules and batch sizes, with defaults', () => {
    expect(loadTimebasedJobConfig(timebasedEnv)).toEqual({
      names: expect.objectContaining({
        documents: expect.objectContaining({ table: 'documents', createdAt: 'created_at' }),
      }),
      deceasedStatus: 90,
      maxDeletesPerStep: 1_000_000,
      documentTypes: [
        { documentType: 'referral', retentionDays: 3650, basis: 'created', batchSize: 10_000 },
        { documentType: 'lab-result', retentionDays: 1825, basis: 'service', batchSize: 500 },
      ],
    });
    expect(loadStatus90JobConfig({})).toMatchObject({
      suffixPageSize: 100_000,
      citizenBatchSize: 100_000,
      batchSize: 10_000,
    });
    expect(loadRepositoryJobConfig({})).toMatchObject({
      pageSize: 1_000_000,
      batchSize: 5_000,
      openxdsNames: { documents: { table: 'repository_documents', id: 'document_id' } },
    });
  });

  it('takes table and column names for an existing database, keeping the defaults for the rest', () => {
    const config = loadRepositoryJobConfig({
      NXRG_NAMES: JSON.stringify({ documents: { table: 'nxrg.dokumenter', citizenId: 'cpr_nr' } }),
      OPENXDS_NAMES: JSON.stringify({ documents: { table: 'xds_docs' } }),
    });
    expect(config.names.documents).toMatchObject({ table: 'nxrg.dokumenter', citizenId: 'cpr_nr', id: 'id' });
    expect(config.openxdsNames.documents).toEqual({ table: 'xds_docs', id: 'document_id' });
  });

  it.each([
    [
      'an unknown document type',
      { CLEANUP_TIMEBASED_DOCUMENT_TYPES: JSON.stringify({ referal: { retentionDays: 10 } }) },
      'CLEANUP_TIMEBASED_DOCUMENT_TYPES.referal: is not a document type listed in NXRG_DOCUMENT_TYPES',
    ],
    [
      'a missing retention',
      { CLEANUP_TIMEBASED_DOCUMENT_TYPES: JSON.stringify({ referral: { batchSize: 10 } }) },
      'CLEANUP_TIMEBASED_DOCUMENT_TYPES.referral.retentionDays: is required',
    ],
    [
      'a retention that is not whole days',
      { CLEANUP_TIMEBASED_DOCUMENT_TYPES: JSON.stringify({ referral: { retentionDays: '10y' } }) },
      'CLEANUP_TIMEBASED_DOCUMENT_TYPES.referral.retentionDays: must be a whole number of days',
    ],
    [
      'a document type batch size of 0',
      { CLEANUP_TIMEBASED_DOCUMENT_TYPES: JSON.stringify({ referral: { retentionDays: 10, batchSize: 0 } }) },
      'CLEANUP_TIMEBASED_DOCUMENT_TYPES.referral.batchSize: must be at least 1',
    ],
    [
      'a default batch size of 0',
      { CLEANUP_TIMEBASED_BATCH_SIZE: '0' },
      'CLEANUP_TIMEBASED_BATCH_SIZE: must be at least 1',
    ],
    [
      'a batch too large for the stack',
      { CLEANUP_TIMEBASED_BATCH_SIZE: '100001' },
      'CLEANUP_TIMEBASED_BATCH_SIZE: must be at most 100000',
    ],
    [
      'a misspelt rule field',
      { CLEANUP_TIMEBASED_DOCUMENT_TYPES: JSON.stringify({ referral: { retentionDays: 10, retention: 5 } }) },
      'CLEANUP_TIMEBASED_DOCUMENT_TYPES.referral.retention: is not a known key',
    ],
    [
      'no document types',
      { CLEANUP_TIMEBASED_DOCUMENT_TYPES: '{}' },
      'CLEANUP_TIMEBASED_DOCUMENT_TYPES: must configure at least one document type',
    ],
    [
      'invalid JSON',
      { CLEANUP_TIMEBASED_DOCUMENT_TYPES: '{referral' },
      'CLEANUP_TIMEBASED_DOCUMENT_TYPES: must be valid JSON',
    ],
    [
      'an empty registry type list',
      { NXRG_DOCUMENT_TYPES: ' , ' },
      'NXRG_DOCUMENT_TYPES: must list at least one document type',
    ],
    [
      'a table name that is not a name',
      { NXRG_NAMES: JSON.stringify({ documents: { table: 'documents; DROP TABLE citizens' } }) },
      'NXRG_NAMES.documents.table: must be a table or column name (letters, digits, _; optionally schema.name)',
    ],
    ['a per-step cap of 0', { CLEANUP_MAX_DELETES_PER_STEP: '0' }, 'CLEANUP_MAX_DELETES_PER_STEP: must be at least 1'],
  ])('rejects %s with a clear error', (_case, override, message) => {
    expect(problems(() => loadTimebasedJobConfig({ ...timebasedEnv, ...override }))).toContain(message);
  });

  it.each([
    [loadStatus90JobConfig, { CLEANUP_STATUS90_BATCH_SIZE: '0' }, 'CLEANUP_STATUS90_BATCH_SIZE: must be at least 1'],
    [
      loadStatus90JobConfig,
      { CLEANUP_STATUS90_BATCH_SIZE: '100001' },
      'CLEANUP_STATUS90_BATCH_SIZE: must be at most 100000',
    ],
    [
      loadStatus90JobConfig,
      { CLEANUP_STATUS90_CITIZEN_BATCH_SIZE: '0' },
      'CLEANUP_STATUS90_CITIZEN_BATCH_SIZE: must be at least 1',
    ],
    [
      loadStatus90JobConfig,
      { CLEANUP_STATUS90_SUFFIX_PAGE_SIZE: '1000', CLEANUP_STATUS90_CITIZEN_BATCH_SIZE: '5000' },
      'CLEANUP_STATUS90_CITIZEN_BATCH_SIZE: must be at most CLEANUP_STATUS90_SUFFIX_PAGE_SIZE (1000): a citizen batch is cut from one suffix page',
    ],
    [
      loadRepositoryJobConfig,
      { CLEANUP_REPOSITORY_BATCH_SIZE: '0' },
      'CLEANUP_REPOSITORY_BATCH_SIZE: must be at least 1',
    ],
    [
      loadRepositoryJobConfig,
      { CLEANUP_REPOSITORY_PAGE_SIZE: 'many' },
      'CLEANUP_REPOSITORY_PAGE_SIZE: must be an integer',
    ],
    [
      loadRepositoryJobConfig,
      { CLEANUP_REPOSITORY_BATCH_SIZE: '100001' },
      'CLEANUP_REPOSITORY_BATCH_SIZE: must be at most 100000',
    ],
    [
      loadRepositoryJobConfig,
      { CLEANUP_REPOSITORY_PAGE_SIZE: '10000001' },
      'CLEANUP_REPOSITORY_PAGE_SIZE: must be at most 10000000',
    ],
    [
      loadRepositoryJobConfig,
      { CLEANUP_REPOSITORY_PAGE_SIZE: '1000000', CLEANUP_REPOSITORY_BATCH_SIZE: '1000' },
      'CLEANUP_REPOSITORY_PAGE_SIZE: page size 1000000 ÷ batch size 1000 would push more than 200 operations in one step',
    ],
    [
      loadRepositoryJobConfig,
      { CLEANUP_REPOSITORY_RECHECK_INTERVAL_MINUTES: '0' },
      'CLEANUP_REPOSITORY_RECHECK_INTERVAL_MINUTES: must be at least 1',
    ],
    [
      loadRepositoryJobConfig,
      { CLEANUP_REPOSITORY_RECHECK_INTERVAL_MINUTES: '1441' },
      'CLEANUP_REPOSITORY_RECHECK_INTERVAL_MINUTES: must be at most 1440',
    ],
    [
      loadRepositoryJobConfig,
      { CLEANUP_REPOSITORY_RECHECK_INTERVAL_MINUTES: '1.5' },
      'CLEANUP_REPOSITORY_RECHECK_INTERVAL_MINUTES: must be an integer',
    ],
    [
      loadRepositoryJobConfig,
      { CLEANUP_REPOSITORY_RECHECK_INTERVAL_MINUTES: 'hourly' },
      'CLEANUP_REPOSITORY_RECHECK_INTERVAL_MINUTES: must be an integer',
    ],
  ])('rejects a bad status90 or repository setting (%#)', (load, env, message) => {
    expect(problems(() => load(env))).toContain(message);
  });

  it('takes status 90 ranges larger than an id list could be: a range travels as a cursor', () => {
    expect(loadStatus90JobConfig({ CLEANUP_STATUS90_BATCH_SIZE: '10000' }).batchSize).toBe(10_000);
  });

  it("takes repository batches larger than an earlier version's id lists: a settle range travels as two keys", () => {
    expect(loadRepositoryJobConfig({ CLEANUP_REPOSITORY_BATCH_SIZE: '50000' }).batchSize).toBe(50_000);
    expect(
      loadRepositoryJobConfig({ CLEANUP_REPOSITORY_PAGE_SIZE: '10000000', CLEANUP_REPOSITORY_BATCH_SIZE: '50000' }),
    ).toMatchObject({
      pageSize: 10_000_000,
      batchSize: 50_000,
    });
  });

  it('rechecks the done deletions hourly unless told otherwise, and takes from a minute to a day', () => {
    expect(loadRepositoryJobConfig({}).recheckIntervalMinutes).toBe(60);
    expect(loadRepositoryJobConfig({ CLEANUP_REPOSITORY_RECHECK_INTERVAL_MINUTES: '' }).recheckIntervalMinutes).toBe(
      60,
    );
    expect(loadRepositoryJobConfig({ CLEANUP_REPOSITORY_RECHECK_INTERVAL_MINUTES: '1' }).recheckIntervalMinutes).toBe(
      1,
    );
    expect(
      loadRepositoryJobConfig({ CLEANUP_REPOSITORY_RECHECK_INTERVAL_MINUTES: '1440' }).recheckIntervalMinutes,
    ).toBe(1440);
  });

  it('never quotes a value in its errors', () => {
    const secret = 'documents_s3cr3t; --';
    const found = problems(() =>
      loadTimebasedJobConfig({ ...timebasedEnv, NXRG_NAMES: JSON.stringify({ documents: { table: secret } }) }),
    );
    expect(found.join(' ')).not.toContain('s3cr3t');
  });
});
