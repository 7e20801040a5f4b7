import { Pool } from 'pg';
import { startEmbeddedPostgres } from '../../../local/embedded-postgres';

describe('shared embedded PostgreSQL (one PGlite, one client request at a time)', () => {
  it('serves concurrent parameterised queries and transactions from several pools without mixing their statements', async () => {
    const postgres = await startEmbeddedPostgres();
    const pools = [1, 2, 3].map(() => new Pool({ connectionString: postgres.url, max: 3 }));
    try {
      await pools[0]!.query('CREATE TABLE t (pool int, n int)');
      // Extended-protocol queries (Parse/Bind/Execute/Sync) from nine clients at once, plus transactions.
      await Promise.all(
        pools.flatMap((pool, p) =>
          Array.from({ length: 20 }, async (_, n) => {
            if (n % 5 === 0) {
              const client = await pool.connect();
              try {
                await client.query('BEGIN');
                await client.query('INSERT INTO t VALUES ($1, $2)', [p, n]);
                await client.query('COMMIT');
              } finally {
                client.release();
              }
            } else {
              await pool.query('INSERT INTO t VALUES ($1, $2)', [p, n]);
            }
          }),
        ),
      );
      const { rows } = await pools[1]!.query<{ pool: number; count: number; total: number }>(
        'SELECT pool, count(*)::int AS count, sum(n)::int AS total FROM t WHERE pool >= $1 GROUP BY pool ORDER BY pool',
        [0],
      );
      expect(rows).toEqual([0, 1, 2].map((pool) => ({ pool, count: 20, total: 190 })));
    } finally {
      await Promise.all(pools.map((p) => p.end()));
      await postgres.stop();
    }
  });
});
