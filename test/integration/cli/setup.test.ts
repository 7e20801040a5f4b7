import { runCli } from '../../../local/cli/cli';
import { createTestSchema, type TestSchema } from '../../harness/postgres';

async function setup(env: Record<string, string>, ...args: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli(['setup', ...args, '--json'], env, {
    out: (t) => (stdout += t),
    err: (t) => (stderr += t),
  });
  if (code !== 0) throw new Error(`fairway setup exited ${code}: ${stderr}`);
  return JSON.parse(stdout) as {
    changed: boolean;
    actions: { object: string; action: string }[];
    registryStatements: string[];
    brokerCommands: string[];
  };
}

/** Everything setup could change: the schema's tables, columns and indexes with their definitions and validity. */
async function catalogue(schema: TestSchema) {
  const { rows } = await schema.pool.query(
    `SELECT c.relname, c.relkind, pg_get_indexdef(c.oid) AS definition, i.indisvalid,
            (SELECT string_agg(attname || ' ' || format_type(atttypid, atttypmod), ', ' ORDER BY attnum)
               FROM pg_attribute WHERE attrelid = c.oid AND attnum > 0 AND NOT attisdropped) AS columns
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace LEFT JOIN pg_index i ON i.indexrelid = c.oid
     WHERE n.nspname = $1 ORDER BY c.relname`,
    [schema.schema],
  );
  return rows;
}

// Issue 27 item 2: `fairway setup` creates what Fairway owns in NXRG, idempotently.
describe('fairway setup on NXRG (PostgreSQL)', () => {
  let nxrg: TestSchema;
  let env: Record<string, string>;

  beforeEach(async () => {
    nxrg = await createTestSchema();
    env = {
      NXRG_DATABASE_URL: nxrg.url,
      AMQP_URL: 'amqps://fairway@broker.example:5671/fairway',
      RABBITMQ_VHOST: 'fairway',
    };
  });
  afterEach(() => nxrg.drop());

  it('twice on an empty schema: the first creates the deletion record and its indexes, the second changes nothing', async () => {
    const first = await setup(env);
    expect(first.changed).toBe(true);
    expect(first.actions).toEqual([
      { object: 'table "deleted_documents"', action: 'created' },
      { object: 'index "deleted_documents_pending_time_idx" on "deleted_documents"', action: 'created' },
      { object: 'index "deleted_documents_done_idx" on "deleted_documents"', action: 'created' },
    ]);
    const after = await catalogue(nxrg);
    expect(after.map((r) => [r.relname, r.indisvalid])).toEqual([
      ['deleted_documents', null],
      ['deleted_documents_done_idx', true],
      ['deleted_documents_pending_time_idx', true],
    ]);

    const second = await setup(env);
    expect(second.changed).toBe(false);
    expect(second.actions.every((a) => a.action === 'already there')).toBe(true);
    expect(await catalogue(nxrg)).toEqual(after);
  });

  it('builds every index concurrently and names the registry’s missing ones and the broker’s commands for their owners', async () => {
    const result = await setup(env);
    expect(result.registryStatements.length).toBeGreaterThan(0);
    expect(result.registryStatements.every((sql) => sql.startsWith('CREATE INDEX CONCURRENTLY IF NOT EXISTS'))).toBe(
      true,
    );
    expect(result.brokerCommands.join('\n')).toContain("rabbitmqctl set_permissions -p 'fairway' 'fairway'");
    expect(result.brokerCommands.join('\n')).toContain("rabbitmqctl set_user_tags 'fairway' management");
  });

  it('--dry-run says what it would do and changes nothing', async () => {
    const result = await setup(env, '--dry-run');
    expect(result.actions.map((a) => a.action)).toEqual(['would create', 'would create', 'would create']);
    expect(await catalogue(nxrg)).toEqual([]);
  });

  it('an earlier version: its pending index is dropped, an invalid index a failed build left is built again', async () => {
    await nxrg.pool.query(
      `CREATE TABLE deleted_documents (document_id uuid PRIMARY KEY, deleted_at timestamptz NOT NULL, reason text NOT NULL, openxds_deleted_at timestamptz);
       CREATE INDEX deleted_documents_pending_idx ON deleted_documents (document_id) WHERE openxds_deleted_at IS NULL;
       CREATE INDEX deleted_documents_done_idx ON deleted_documents (openxds_deleted_at, document_id) WHERE openxds_deleted_at IS NOT NULL;
       UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'deleted_documents_done_idx'::regclass;`,
    );
    const result = await setup(env);
    expect(result.actions).toEqual([
      { object: 'table "deleted_documents"', action: 'already there' },
      { object: 'index "deleted_documents_pending_time_idx" on "deleted_documents"', action: 'created' },
      { object: 'index "deleted_documents_done_idx" on "deleted_documents"', action: 'rebuilt' },
      { object: 'index "deleted_documents_pending_idx" (an earlier version\'s)', action: 'dropped' },
    ]);
    const indexes = (await catalogue(nxrg)).filter((r) => r.relkind === 'i').map((r) => [r.relname, r.indisvalid]);
    expect(indexes).toEqual([
      ['deleted_documents_done_idx', true],
      ['deleted_documents_pending_time_idx', true],
      ['deleted_documents_pkey', true],
    ]);
    expect((await setup(env)).changed).toBe(false);
  });
});
