import { Pool } from 'pg';
import { services, serviceUnavailable, uniqueName } from './services';

export interface TestSchema {
  schema: string;
  /** A connection string whose sessions use this schema first (search_path). */
  url: string;
  /** A pool on `url`, for the test's own setup and assertions. */
  pool: Pool;
  drop(): Promise<void>;
}

/** A PostgreSQL schema of this test file's own (or of the given name), dropped with everything in it at the end. */
export async function createTestSchema(schema = uniqueName('fairway'), poolSize = 10): Promise<TestSchema> {
  const admin = new Pool({ connectionString: services.databaseUrl, max: 1 });
  try {
    await admin.query(`CREATE SCHEMA "${schema}"`);
  } catch (error) {
    await admin.end();
    throw serviceUnavailable('PostgreSQL', error);
  }
  const url = new URL(services.databaseUrl);
  url.searchParams.set('options', `-c search_path="${schema}"`);
  const pool = new Pool({ connectionString: url.toString(), max: poolSize });
  return {
    schema,
    url: url.toString(),
    pool,
    async drop() {
      await pool.end();
      await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
      await admin.end();
    },
  };
}
