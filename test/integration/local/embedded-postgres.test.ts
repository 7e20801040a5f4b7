import { Pool } from 'pg';
import { startEmbeddedPostgres } from '../../../local/embedded-postgres';

describe('embedded PostgreSQL (PGlite behind a socket)', () => {
  it('serves several node-postgres clients at once and stops cleanly', async () => {
    const postgres = await startEmbeddedPostgres();
    const pool = new Pool({ connectionString: postgres.url, max: 3 });
    try {
      await pool.query('CREATE TABLE t (n int)');
      await Promise.all([1, 2, 3].map((n) => pool.query('INSERT INTO t VALUES ($1)', [n])));
      const { rows } = await pool.query<{ total: number }>('SELECT sum(n)::int AS total FROM t');
      expect(rows).toEqual([{ total: 6 }]);
    } finally {
      await pool.end();
      await postgres.stop();
    }
  });
});
