import type { Pool } from 'pg';
import { buildJob } from '../../../lib/cleanup/jobs';
import type { NxrgNames } from '../../../lib/cleanup/nxrg/names';
import type { Env } from '../../../lib/platform/config';
import { ConfigError, DatabaseError, errorText } from '../../../lib/platform/errors';
import type { CleanupFunctionConfig } from '../../../lib/wiring/cleanup';
import { databaseSettings, jobDatabases } from '../../../lib/wiring/cleanup';
import { expectedIndexes, missingIndexes } from '../nxrg-ddl';
import { type Check, fail, ok } from './check';

/** A report that drops what the jobs would log: the doctor only asks the databases. */
const silent = {
  stepped: () => undefined,
  stepFailed: () => undefined,
  deleted: () => undefined,
  dropped: () => undefined,
  connectionFailed: () => undefined,
};

/**
 * The NXRG and OpenXDS schemas as each cleanup job checks them at cold start (its own `verify`:
 * tables, columns, types, the deletion record's keys), and the indexes nxrgSchemaSql renders for
 * the configured names, which make every cleanup query an index range scan.
 */
export async function checkDatabases(jobs: readonly CleanupFunctionConfig[], env: Env): Promise<Check[]> {
  if (jobs.length === 0) return [];
  const checks: Check[] = [];
  // The URLs with the secrets' credentials in them (the configurations were read without them).
  const cleanup = {
    ...jobs[0]!.cleanup,
    NXRG_DATABASE_URL: env.NXRG_DATABASE_URL ?? jobs[0]!.cleanup.NXRG_DATABASE_URL,
    OPENXDS_DATABASE_URL: env.OPENXDS_DATABASE_URL ?? jobs[0]!.cleanup.OPENXDS_DATABASE_URL,
  };
  const databases = jobDatabases(databaseSettings(cleanup), silent);
  try {
    const reachable = {
      NXRG: await reach(databases.nxrg, 'NXRG', checks),
      OpenXDS: jobs.some((j) => j.job.name === 'repository-cleanup')
        ? await reach(databases.openxds, 'OpenXDS', checks)
        : false,
    };
    if (!reachable.NXRG) return checks;
    for (const { job } of jobs) {
      if (job.name === 'repository-cleanup' && !reachable.OpenXDS) continue;
      checks.push(await verifyJob(job, databases));
    }
    checks.push(await checkIndexes(databases.nxrg, jobs[0]!.job.config.names));
    return checks;
  } finally {
    await Promise.all([databases.nxrg.end(), databases.openxds.end()]);
  }
}

async function reach(pool: Pool, database: 'NXRG' | 'OpenXDS', checks: Check[]): Promise<boolean> {
  try {
    await DatabaseError.wrap(database, () => pool.query('SELECT 1'));
    checks.push(ok(`${database} database`, 'reachable, login accepted'));
    return true;
  } catch (error) {
    checks.push(
      fail(
        `${database} database`,
        `${errorText(error).replace(/^\w+: /, '')}: check the URL, the user's password (its secret) and the security group on 5432`,
      ),
    );
    return false;
  }
}

async function verifyJob(
  job: CleanupFunctionConfig['job'],
  databases: ReturnType<typeof jobDatabases>,
): Promise<Check> {
  const check = `schema for ${job.name}`;
  try {
    await buildJob(job, databases, silent).verify?.();
    return ok(check, 'every table and column it touches, of a usable type');
  } catch (error) {
    if (error instanceof ConfigError) {
      return fail(
        check,
        `${error.problems.join('; ')}: run \`fairway setup\` for the deletion record, fix NXRG_NAMES / OPENXDS_NAMES, or the database (infra/sql)`,
      );
    }
    return fail(check, errorText(error));
  }
}

async function checkIndexes(pool: Pool, names: NxrgNames): Promise<Check> {
  const expected = expectedIndexes(names);
  const missing = await missingIndexes(pool, expected);
  if (missing.length === 0) return ok('NXRG indexes', `${expected.length} indexes the cleanup queries walk`);
  return fail(
    'NXRG indexes',
    `missing: ${missing.map((m) => `${m.name} on ${m.table} (${m.columns.join(', ')})${m.where ? ` WHERE ${m.where}` : ''}`).join('; ')}. ` +
      "`fairway setup` builds the deletion record's; the others are the registry's, printed by `fairway setup` for its DBA",
  );
}
