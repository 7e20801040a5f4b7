import { z } from 'zod';
import { type Env, setting } from '../../platform/config';
import { ConfigError } from '../../platform/errors';
import { type NxrgNames, nxrgNamesSchema } from '../nxrg/names';
import { openxdsNamesSchema } from '../openxds/names';

/**
 * The three cleanup jobs' own settings (SPEC §4), read once at cold start beside lib/cleanup/config.ts.
 * No job pushes id lists any more; this caps those an earlier version left on a deployed stack
 * (`batch-delete`, 2,000 UUIDs ≈ 80 KB of JSON, far below DynamoDB's 400 KB item limit).
 */
export const MAX_LEGACY_BATCH_IDS = 2_000;
/**
 * A range travels as its bounds (a cursor), whatever it covers, so a batch size (one time-based,
 * status 90 or repository round) only bounds one statement: its locks, its WAL, how far it may overrun
 * the time budget. A repository round of 100,000 (NXRG select and mark, OpenXDS `DELETE … = ANY($1)`)
 * took 3–7 s on the development machine, settling no faster than smaller rounds: once a list is long
 * enough against its table, PostgreSQL reads an `= ANY($1)` by a sequential scan, not the primary key.
 */
export const MAX_RANGE_SIZE = 100_000;
/** A supplier step pushes at most this many children (page size ÷ batch size), keeping each step short. */
export const MAX_CHILDREN_PER_STEP = 200;
const MAX_PAGE_SIZE = 100_000;
/**
 * A repository page is walked, not read: one index-only statement over the pending index (about
 * 0.6 s a million entries on the development machine) finds the end of a settle range.
 */
const MAX_REPOSITORY_PAGE_SIZE = 10_000_000;

/**
 * The repository recheck's interval is the bound on how long a copy that re-appeared in OpenXDS may
 * stay (plus one pass): longer than a day leaves a deleted citizen's document in the repository for days.
 */
const MAX_RECHECK_INTERVAL_MINUTES = 1_440;

const wholeNumber = (what: string, min: number, max: number) =>
  z
    .number({ error: (issue) => (issue.input === undefined ? 'is required' : `must be ${what}`) })
    .int({ error: `must be ${what}` })
    .min(min, { error: `must be at least ${min}` })
    .max(max, { error: `must be at most ${max}` });

/** One document type's retention rule: kept `retentionDays` after its creation (or service) time. */
const documentTypeRuleSchema = z.strictObject({
  retentionDays: wholeNumber('a whole number of days', 1, 36_500),
  basis: z.enum(['created', 'service'], { error: 'must be "created" or "service"' }).default('created'),
  batchSize: wholeNumber('a whole number', 1, MAX_RANGE_SIZE).optional(),
});

const commaList = () =>
  setting
    .text()
    .transform((raw) =>
      raw
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    )
    .pipe(z.array(z.string()).min(1, { error: 'must list at least one document type' }));

const nxrgSettings = {
  NXRG_NAMES: setting.json(nxrgNamesSchema, {}),
};

/**
 * What the jobs fix instead of reading it (docs/configuration.md "Fixed values"). Tests pass smaller
 * ones to the loaders below; no environment variable reaches them. `checkJobTuning` holds any to
 * the rules between them.
 */
export const JOB_TUNING = {
  /** SPEC §4: a citizen with status 90 is deceased (the job is named for it). */
  deceasedStatus: 90,
  /** A step deletes at most this many documents, whatever its ranges: a bound on one step's damage. */
  maxDeletesPerStep: 1_000_000,
  /** Documents in one range delete (one statement); a step deletes range after range within its budget. */
  timebasedBatchSize: 10_000,
  /** CPR numbers one status-90 suffix step reads (they stay in the function's memory while it splits them). */
  status90SuffixPageSize: 100_000,
  /** Citizens of one citizen batch: as large as a page, since a round reads only its own range. */
  status90CitizenBatchSize: 100_000,
  /** Documents (and at most as many citizens) in one status-90 range delete. */
  status90BatchSize: 10_000,
  /** Pending deletions one `settle` range spans, and done ones one recheck step goes through. */
  repositoryPageSize: 1_000_000,
  /** Deletions per repository round: one NXRG transaction and one OpenXDS statement. */
  repositoryBatchSize: 5_000,
  /** Every done deletion is read again per recheck (~4.4 s a million): hourly, not on every fill. */
  recheckIntervalMinutes: 60,
};

export type JobTuning = typeof JOB_TUNING;

/** Refuses tuning that breaks a rule between its values (a test's, or a future constant): fail closed. */
export function checkJobTuning(tuning: JobTuning): void {
  const problems: string[] = [];
  const children = (name: string, page: number, batch: number) => {
    if (Math.ceil(page / batch) > MAX_CHILDREN_PER_STEP)
      problems.push(
        `${name}: page size ${page} ÷ batch size ${batch} would push more than ${MAX_CHILDREN_PER_STEP} operations in one step`,
      );
  };
  children('status90SuffixPageSize', tuning.status90SuffixPageSize, tuning.status90CitizenBatchSize);
  children('repositoryPageSize', tuning.repositoryPageSize, tuning.repositoryBatchSize);
  if (tuning.status90CitizenBatchSize > tuning.status90SuffixPageSize)
    problems.push(
      'status90CitizenBatchSize: must be at most status90SuffixPageSize (a citizen batch is cut from one page)',
    );
  for (const [name, value, max] of [
    ['timebasedBatchSize', tuning.timebasedBatchSize, MAX_RANGE_SIZE],
    ['status90BatchSize', tuning.status90BatchSize, MAX_RANGE_SIZE],
    ['repositoryBatchSize', tuning.repositoryBatchSize, MAX_RANGE_SIZE],
    ['status90SuffixPageSize', tuning.status90SuffixPageSize, MAX_PAGE_SIZE],
    ['repositoryPageSize', tuning.repositoryPageSize, MAX_REPOSITORY_PAGE_SIZE],
    ['recheckIntervalMinutes', tuning.recheckIntervalMinutes, MAX_RECHECK_INTERVAL_MINUTES],
    ['maxDeletesPerStep', tuning.maxDeletesPerStep, Number.MAX_SAFE_INTEGER],
  ] as const) {
    if (!Number.isInteger(value) || value < 1 || value > max)
      problems.push(`${name}: must be a whole number from 1 to ${max}`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
}

export const timebasedJobSchema = z
  .object({
    ...nxrgSettings,
    /** Every document type the registry holds: a rule for any other type is a typo. */
    NXRG_DOCUMENT_TYPES: commaList(),
    CLEANUP_TIMEBASED_DOCUMENT_TYPES: setting.json(
      z.record(z.string(), documentTypeRuleSchema).refine((rules) => Object.keys(rules).length > 0, {
        error: 'must configure at least one document type',
      }),
      {},
    ),
  })
  .superRefine((env, ctx) => {
    const known = new Set(env.NXRG_DOCUMENT_TYPES);
    for (const type of Object.keys(env.CLEANUP_TIMEBASED_DOCUMENT_TYPES)) {
      if (!known.has(type))
        ctx.addIssue({
          code: 'custom',
          path: ['CLEANUP_TIMEBASED_DOCUMENT_TYPES', type],
          message: 'is not a document type listed in NXRG_DOCUMENT_TYPES',
        });
    }
  });

export const status90JobSchema = z.object({ ...nxrgSettings });

export const repositoryJobSchema = z.object({
  ...nxrgSettings,
  OPENXDS_NAMES: setting.json(openxdsNamesSchema, {}),
});

/**
 * Parses with `schema` and names every problem by its full path (`VARIABLE.key.field`), never
 * quoting a value: a JSON setting's inner mistakes are then as clear as a plain variable's.
 */
function parseJobEnv<S extends z.ZodType>(schema: S, env: Env): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  throw new ConfigError(
    result.error.issues.flatMap((issue) => {
      const path = issue.path.map(String).join('.');
      if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => `${path}.${key}: is not a known key`);
      return [`${path || '(environment)'}: ${issue.message}`];
    }),
  );
}

interface RegistryEnv {
  NXRG_NAMES: NxrgNames;
}

/**
 * Parses one job's settings with `schema`; its own come from `own`, beside those every job shares.
 * `tuning` replaces fixed values for a test or bench (never from the environment).
 */
function loadJobConfig<S extends z.ZodType<RegistryEnv>, R>(
  schema: S,
  env: Env,
  tuning: Partial<JobTuning>,
  own: (e: z.infer<S>, t: JobTuning) => R,
) {
  const e = parseJobEnv(schema, env);
  const t = { ...JOB_TUNING, ...tuning };
  checkJobTuning(t);
  return {
    names: e.NXRG_NAMES,
    deceasedStatus: t.deceasedStatus,
    maxDeletesPerStep: t.maxDeletesPerStep,
    ...own(e, t),
  };
}

export interface DocumentTypeRule {
  documentType: string;
  retentionDays: number;
  basis: 'created' | 'service';
  batchSize: number;
}

export const loadTimebasedJobConfig = (env: Env, tuning: Partial<JobTuning> = {}) =>
  loadJobConfig(timebasedJobSchema, env, tuning, (e, t) => ({
    documentTypes: Object.entries(e.CLEANUP_TIMEBASED_DOCUMENT_TYPES).map(
      ([documentType, rule]): DocumentTypeRule => ({
        documentType,
        retentionDays: rule.retentionDays,
        basis: rule.basis,
        batchSize: rule.batchSize ?? t.timebasedBatchSize,
      }),
    ),
  }));

export const loadStatus90JobConfig = (env: Env, tuning: Partial<JobTuning> = {}) =>
  loadJobConfig(status90JobSchema, env, tuning, (_e, t) => ({
    suffixPageSize: t.status90SuffixPageSize,
    citizenBatchSize: t.status90CitizenBatchSize,
    batchSize: t.status90BatchSize,
  }));

export const loadRepositoryJobConfig = (env: Env, tuning: Partial<JobTuning> = {}) =>
  loadJobConfig(repositoryJobSchema, env, tuning, (e, t) => ({
    openxdsNames: e.OPENXDS_NAMES,
    pageSize: t.repositoryPageSize,
    batchSize: t.repositoryBatchSize,
    recheckIntervalMinutes: t.recheckIntervalMinutes,
  }));

export type TimebasedJobConfig = ReturnType<typeof loadTimebasedJobConfig>;
export type Status90JobConfig = ReturnType<typeof loadStatus90JobConfig>;
export type RepositoryJobConfig = ReturnType<typeof loadRepositoryJobConfig>;
