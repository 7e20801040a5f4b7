import { z } from 'zod';
import { type Env, setting } from '../../platform/config/env';
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

const pageSize = (fallback: number) => setting.int(fallback, 1, MAX_PAGE_SIZE);

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
  NXRG_DECEASED_STATUS: setting.int(90, 0),
  CLEANUP_MAX_DELETES_PER_STEP: setting.int(1_000_000, 1, 100_000_000),
};

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
    /** Documents in one range delete (one statement); a step deletes range after range within its budget. */
    CLEANUP_TIMEBASED_BATCH_SIZE: setting.int(10_000, 1, MAX_RANGE_SIZE),
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

export const status90JobSchema = z
  .object({
    ...nxrgSettings,
    /** CPR numbers one suffix step reads (they stay in the function's memory while it splits them). */
    CLEANUP_STATUS90_SUFFIX_PAGE_SIZE: pageSize(100_000),
    /**
     * Citizens of one citizen batch (a CPR range on the stack). A round of the batch reads only its own
     * range, so the batch may be as large as a page: fewer, longer steps, each using its time budget.
     */
    CLEANUP_STATUS90_CITIZEN_BATCH_SIZE: setting.int(100_000, 1, MAX_PAGE_SIZE),
    /** Documents (and at most as many citizens) in one range delete (one statement); a citizen batch deletes range after range within its budget. */
    CLEANUP_STATUS90_BATCH_SIZE: setting.int(10_000, 1, MAX_RANGE_SIZE),
  })
  .superRefine((env, ctx) => {
    const page = env.CLEANUP_STATUS90_SUFFIX_PAGE_SIZE;
    checkChildren(ctx, ['CLEANUP_STATUS90_SUFFIX_PAGE_SIZE'], page, env.CLEANUP_STATUS90_CITIZEN_BATCH_SIZE);
    // A larger batch would silently be the page: say so rather than run batches other than configured.
    if (env.CLEANUP_STATUS90_CITIZEN_BATCH_SIZE > page) {
      ctx.addIssue({
        code: 'custom',
        path: ['CLEANUP_STATUS90_CITIZEN_BATCH_SIZE'],
        message: `must be at most CLEANUP_STATUS90_SUFFIX_PAGE_SIZE (${page}): a citizen batch is cut from one suffix page`,
      });
    }
  });

export const repositoryJobSchema = z
  .object({
    ...nxrgSettings,
    OPENXDS_NAMES: setting.json(openxdsNamesSchema, {}),
    /** Pending deletions one `settle` range spans, and done ones one recheck step goes through. */
    CLEANUP_REPOSITORY_PAGE_SIZE: setting.int(1_000_000, 1, MAX_REPOSITORY_PAGE_SIZE),
    /** Deletions per round: one NXRG transaction and one OpenXDS statement; a step goes on round after round within its budget. */
    CLEANUP_REPOSITORY_BATCH_SIZE: setting.int(5_000, 1, MAX_RANGE_SIZE),
    /**
     * Minutes from the start of the last finished recheck before a fill starts the next: every done
     * deletion is read again per recheck (~4.4 s a million), so it runs hourly, not on every fill.
     */
    CLEANUP_REPOSITORY_RECHECK_INTERVAL_MINUTES: setting.int(60, 1, MAX_RECHECK_INTERVAL_MINUTES),
  })
  .superRefine((env, ctx) =>
    checkChildren(
      ctx,
      ['CLEANUP_REPOSITORY_PAGE_SIZE'],
      env.CLEANUP_REPOSITORY_PAGE_SIZE,
      env.CLEANUP_REPOSITORY_BATCH_SIZE,
    ),
  );

function checkChildren(ctx: z.RefinementCtx, path: string[], page: number, batch: number) {
  if (Math.ceil(page / batch) > MAX_CHILDREN_PER_STEP) {
    ctx.addIssue({
      code: 'custom',
      path,
      message: `page size ${page} ÷ batch size ${batch} would push more than ${MAX_CHILDREN_PER_STEP} operations in one step`,
    });
  }
}

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
  NXRG_DECEASED_STATUS: number;
  CLEANUP_MAX_DELETES_PER_STEP: number;
}

/** Parses one job's settings with `schema`; its own come from `own`, beside those every job shares. */
function loadJobConfig<S extends z.ZodType<RegistryEnv>, R>(schema: S, env: Env, own: (e: z.infer<S>) => R) {
  const e = parseJobEnv(schema, env);
  return {
    names: e.NXRG_NAMES,
    deceasedStatus: e.NXRG_DECEASED_STATUS,
    maxDeletesPerStep: e.CLEANUP_MAX_DELETES_PER_STEP,
    ...own(e),
  };
}

export interface DocumentTypeRule {
  documentType: string;
  retentionDays: number;
  basis: 'created' | 'service';
  batchSize: number;
}

export const loadTimebasedJobConfig = (env: Env) =>
  loadJobConfig(timebasedJobSchema, env, (e) => ({
    documentTypes: Object.entries(e.CLEANUP_TIMEBASED_DOCUMENT_TYPES).map(
      ([documentType, rule]): DocumentTypeRule => ({
        documentType,
        retentionDays: rule.retentionDays,
        basis: rule.basis,
        batchSize: rule.batchSize ?? e.CLEANUP_TIMEBASED_BATCH_SIZE,
      }),
    ),
  }));

export const loadStatus90JobConfig = (env: Env) =>
  loadJobConfig(status90JobSchema, env, (e) => ({
    suffixPageSize: e.CLEANUP_STATUS90_SUFFIX_PAGE_SIZE,
    citizenBatchSize: e.CLEANUP_STATUS90_CITIZEN_BATCH_SIZE,
    batchSize: e.CLEANUP_STATUS90_BATCH_SIZE,
  }));

export const loadRepositoryJobConfig = (env: Env) =>
  loadJobConfig(repositoryJobSchema, env, (e) => ({
    openxdsNames: e.OPENXDS_NAMES,
    pageSize: e.CLEANUP_REPOSITORY_PAGE_SIZE,
    batchSize: e.CLEANUP_REPOSITORY_BATCH_SIZE,
    recheckIntervalMinutes: e.CLEANUP_REPOSITORY_RECHECK_INTERVAL_MINUTES,
  }));

export type TimebasedJobConfig = ReturnType<typeof loadTimebasedJobConfig>;
export type Status90JobConfig = ReturnType<typeof loadStatus90JobConfig>;
export type RepositoryJobConfig = ReturnType<typeof loadRepositoryJobConfig>;
