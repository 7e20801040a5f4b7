#!/usr/bin/env node
// Issue 15, the deletion record's shape: EXPLAIN (ANALYZE, WAL) of DELETE-and-record against a bare DELETE
// of 10,000 documents (200,000 in the table), on a deletion table of `history` rows (1 % pending), and of
// the settle's mark of 5,000 pending records, per shape of deleted_documents. Each statement runs in a
// rolled-back transaction, so every round starts from the same table; rounds alternate which goes first.
// Usage: node scripts/measure-deletion-record.mjs [history=1000000] [rounds=5]  (TEST_DATABASE_URL or local postgres)
import pg from 'pg';

const url = process.env.TEST_DATABASE_URL ?? 'postgres://postgres:postgres@127.0.0.1:5432/postgres';
const history = Number(process.argv[2] ?? 1_000_000);
const rounds = Number(process.argv[3] ?? 5);
const schema = `measure_record_${process.pid}`;
const pending = 'CREATE INDEX ON deleted_documents (deleted_at, document_id) WHERE openxds_deleted_at IS NULL';
const plain = `INSERT INTO deleted_documents (document_id, deleted_at, reason) SELECT id, now(), 'm' FROM gone`;
const byId =
  'UPDATE deleted_documents SET openxds_deleted_at = now() WHERE document_id = ANY($1::uuid[]) AND openxds_deleted_at IS NULL';
const byCtid =
  'UPDATE deleted_documents SET openxds_deleted_at = now() WHERE ctid = ANY($1::tid[]) AND openxds_deleted_at IS NULL';
const shapes = {
  'keyed (earlier: primary key, ON CONFLICT reset)': {
    ddl: `ALTER TABLE deleted_documents ADD PRIMARY KEY (document_id); ${pending}`,
    record: `${plain} ON CONFLICT (document_id) DO UPDATE
      SET deleted_at = EXCLUDED.deleted_at, reason = EXCLUDED.reason, openxds_deleted_at = NULL`,
    mark: byId,
  },
  'keyed, plain INSERT': {
    ddl: `ALTER TABLE deleted_documents ADD PRIMARY KEY (document_id); ${pending}`,
    record: plain,
    mark: byId,
  },
  'appended (pending + done index)': {
    ddl: `${pending}; CREATE INDEX ON deleted_documents (openxds_deleted_at, document_id) WHERE openxds_deleted_at IS NOT NULL`,
    record: plain,
    mark: byCtid,
  },
  'no index': { ddl: 'SELECT 1', record: plain, mark: byCtid },
};

const walOf = (node) =>
  (node['Node Type'] === 'ModifyTable' ? (node['WAL Bytes'] ?? 0) : 0) +
  (node.Plans ?? []).reduce((s, n) => s + walOf(n), 0);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function explain(client, sql, params) {
  await client.query('BEGIN');
  try {
    const { rows } = await client.query(`EXPLAIN (ANALYZE, WAL, FORMAT JSON) ${sql}`, params);
    const plan = rows[0]['QUERY PLAN'][0];
    return { ms: plan['Execution Time'], wal: walOf(plan.Plan) };
  } finally {
    await client.query('ROLLBACK');
  }
}

async function setUp(client, ddl) {
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}; SET search_path = ${schema}`);
  await client.query(
    `CREATE TABLE documents (id uuid PRIMARY KEY, document_type text NOT NULL, citizen_id char(10) NOT NULL,
      created_at timestamptz NOT NULL, service_time timestamptz);
    CREATE INDEX ON documents (document_type, created_at, id);
    CREATE INDEX ON documents (document_type, service_time, id);
    CREATE INDEX ON documents (citizen_id, id);
    INSERT INTO documents SELECT md5('d' || i)::uuid, 'referral', lpad((i % 20000)::text, 10, '0'),
      now() - i * interval '1 minute', now() FROM generate_series(1, 200000) i;
    CREATE TABLE deleted_documents (document_id uuid NOT NULL, deleted_at timestamptz NOT NULL, reason text NOT NULL,
      openxds_deleted_at timestamptz);
    INSERT INTO deleted_documents SELECT md5('h' || i)::uuid, now() - ($1::int - i) * interval '1 second', 'h',
      CASE WHEN i % 100 <> 0 THEN now() - ($1::int - i) * interval '1 second' + interval '1 minute' END
      FROM generate_series(1, $1::int) i;
    ${ddl}`.replaceAll('$1::int', String(history)),
  );
  await client.query('VACUUM ANALYZE documents');
  await client.query('VACUUM ANALYZE deleted_documents');
}

const client = new pg.Client({ connectionString: url });
await client.connect();
try {
  for (const [shape, { ddl, record, mark }] of Object.entries(shapes)) {
    await setUp(client, ddl);
    const speeds = [];
    const wal = [];
    const marks = [];
    for (let round = 0; round < rounds; round++) {
      const { rows } = await client.query(
        'SELECT array_agg(id) AS ids FROM (SELECT id FROM documents OFFSET $1 LIMIT 10000) s',
        [round * 10_000],
      );
      const bareSql = 'DELETE FROM documents WHERE id = ANY($1::uuid[])';
      const recordSql = `WITH gone AS (${bareSql} RETURNING id), recorded AS (${record}) SELECT count(*) FROM gone`;
      const first = round % 2 === 0 ? bareSql : recordSql;
      const a = await explain(client, first, [rows[0].ids]);
      const b = await explain(client, first === bareSql ? recordSql : bareSql, [rows[0].ids]);
      const [bare, recorded] = first === bareSql ? [a, b] : [b, a];
      speeds.push(bare.ms / recorded.ms);
      wal.push(recorded.wal / 10_000);
      const records = await client.query(
        `SELECT array_agg(document_id) AS ids, array_agg(ctid::text) AS tids FROM (SELECT document_id, ctid FROM deleted_documents
         WHERE openxds_deleted_at IS NULL ORDER BY deleted_at, document_id OFFSET $1 LIMIT 5000) s`,
        [(round % 2) * 5000],
      );
      const m = await explain(client, mark, [mark === byId ? records.rows[0].ids : records.rows[0].tids]);
      marks.push(`${m.ms.toFixed(1)} ms`);
    }
    console.log(
      `${shape}, history ${history}: DELETE-and-record speed ÷ bare DELETE ${speeds.map((s) => s.toFixed(2)).join(' ')}` +
        ` (median ${median(speeds).toFixed(2)}), record WAL/doc median ${median(wal).toFixed(0)} B;` +
        ` mark of 5,000: ${marks.join(', ')}`,
    );
  }
} finally {
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await client.end();
}
