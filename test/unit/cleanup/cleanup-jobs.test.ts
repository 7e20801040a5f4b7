import {
  checkJobTuning,
  JOB_TUNING,
  type JobTuning,
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
      'a batch too large for the stack',
      { CLEANUP_TIMEBASED_DOCUMENT_TYPES: JSON.stringify({ referral: { retentionDays: 10, batchSize: 100_001 } }) },
      'CLEANUP_TIMEBASED_DOCUMENT_TYPES.referral.batchSize: must be at most 100000',
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
  ])('rejects %s with a clear error', (_case, override, message) => {
    expect(problems(() => loadTimebasedJobConfig({ ...timebasedEnv, ...override }))).toContain(message);
  });

  it.each<[string, Partial<JobTuning>, string]>([
    ['a status-90 batch of 0', { status90BatchSize: 0 }, 'status90BatchSize: must be a whole number from 1 to 100000'],
    [
      'a range over 100,000',
      { repositoryBatchSize: 100_001 },
      'repositoryBatchSize: must be a whole number from 1 to 100000',
    ],
    [
      'a per-step cap of 0',
      { maxDeletesPerStep: 0 },
      'maxDeletesPerStep: must be a whole number from 1 to 9007199254740991',
    ],
    [
      'a recheck over a day',
      { recheckIntervalMinutes: 1441 },
      'recheckIntervalMinutes: must be a whole number from 1 to 1440',
    ],
    [
      'a citizen batch over its page',
      { status90SuffixPageSize: 1000, status90CitizenBatchSize: 5000 },
      'status90CitizenBatchSize: must be at most status90SuffixPageSize (a citizen batch is cut from one page)',
    ],
    [
      'a page of more than 200 batches',
      { repositoryPageSize: 1_000_000, repositoryBatchSize: 1000 },
      'repositoryPageSize: page size 1000000 ÷ batch size 1000 would push more than 200 operations in one step',
    ],
  ])('refuses a test tuning that breaks a rule: %s (fail closed)', (_case, tuning, message) => {
    expect(problems(() => loadRepositoryJobConfig({}, tuning))).toContain(message);
  });

  it('the fixed values keep those rules', () => {
    expect(() => checkJobTuning(JOB_TUNING)).not.toThrow();
  });

  it('takes a smaller tuning for a test, never from the environment', () => {
    expect(loadStatus90JobConfig({}, { status90BatchSize: 4 }).batchSize).toBe(4);
    expect(loadRepositoryJobConfig({}, { repositoryPageSize: 10, repositoryBatchSize: 2 })).toMatchObject({
      pageSize: 10,
      batchSize: 2,
    });
    expect(loadRepositoryJobConfig({}).recheckIntervalMinutes).toBe(60);
  });

  it('never quotes a value in its errors', () => {
    const secret = 'documents_s3cr3t; --';
    const found = problems(() =>
      loadTimebasedJobConfig({ ...timebasedEnv, NXRG_NAMES: JSON.stringify({ documents: { table: secret } }) }),
    );
    expect(found.join(' ')).not.toContain('s3cr3t');
  });
});
