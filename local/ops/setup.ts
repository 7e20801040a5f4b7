import { Pool } from 'pg';
import { z } from 'zod';
import { repositoryJobSchema } from '../../lib/cleanup/jobs/config';
import { quoteIdentifier } from '../../lib/cleanup/postgres/identifier';
import { amqpUser, type Env, parseEnv } from '../../lib/platform/config';
import { DatabaseError, FairwayError } from '../../lib/platform/errors';
import { POSTGRES_TIMEOUT_DEFAULT_SECONDS } from '../../lib/platform/network-bounds';
import { postgresSettings, rabbitSettings } from '../../lib/settings/common';
import { brokerPermissions, setPermissionsCommand } from './doctor/broker';
import { type ExpectedIndex, missingIndexes, nxrgStatements } from './nxrg-ddl';

const setupSettingsSchema = z.object({
  NXRG_DATABASE_URL: postgresSettings.NXRG_DATABASE_URL,
  NXRG_NAMES: repositoryJobSchema.shape.NXRG_NAMES,
  AMQP_URL: z.string().optional(),
  RABBITMQ_VHOST: rabbitSettings.RABBITMQ_VHOST,
});
export const loadSetupSettings = (env: Env) => parseEnv(setupSettingsSchema, env);
export type SetupSettings = z.infer<typeof setupSettingsSchema>;

/** What setup did to one object of Fairway's own. */
export interface SetupAction {
  object: string;
  action: 'created' | 'rebuilt' | 'dropped' | 'already there' | 'would create' | 'would rebuild' | 'would drop';
}

export interface SetupResult {
  /** False when the run found everything in place (a second run changes nothing). */
  changed: boolean;
  actions: SetupAction[];
  /** The registry's own indexes the jobs need and do not have: for its DBA to build (setup never touches its tables). */
  registryStatements: string[];
  /** The broker side, for its operator: setup never changes the broker. */
  brokerCommands: string[];
}

const concurrently = (sql: string) => sql.replace(/^(CREATE|DROP) INDEX /, '$1 INDEX CONCURRENTLY ');

/**
 * `fairway setup`: creates what Fairway owns in NXRG, idempotently — the deletion-record table
 * and its indexes as nxrgSchemaSql renders them for NXRG_NAMES, each index built CONCURRENTLY
 * (writes go on while it builds; an invalid one a failed build left is dropped and built again),
 * and drops the pending index of an earlier version once its replacement is there
 * (docs/cleanup.md, Operating). The registry's own tables and the broker are left alone: what they
 * lack is returned as statements and commands for their owners.
 */
export async function runSetup(settings: SetupSettings, options: { dryRun: boolean }): Promise<SetupResult> {
  const names = settings.NXRG_NAMES;
  const statements = nxrgStatements(names);
  const owned = quoteIdentifier(names.deletedDocuments.table);
  // A connection attempt is bounded as the jobs' are; the DDL is not: an index build takes what it takes.
  const pool = new Pool({
    connectionString: settings.NXRG_DATABASE_URL,
    max: 1,
    connectionTimeoutMillis: POSTGRES_TIMEOUT_DEFAULT_SECONDS * 1000,
  });
  const query = <R extends Record<string, unknown>>(sql: string, params: unknown[] = []) =>
    DatabaseError.wrap('NXRG', () => pool.query<R>(sql, params)).then((r) => r.rows);
  const exists = async (name: string) =>
    (await query<{ found: boolean }>('SELECT to_regclass($1) IS NOT NULL AS found', [name]))[0]!.found;
  const actions: SetupAction[] = [];
  const act = async (object: string, done: SetupAction['action'], would: SetupAction['action'], sql: string[]) => {
    if (!options.dryRun) for (const statement of sql) await query(statement);
    actions.push({ object, action: options.dryRun ? would : done });
  };
  try {
    for (const statement of statements) {
      if (statement.kind === 'table' && statement.table === owned) {
        if (await exists(statement.table))
          actions.push({ object: `table ${statement.table}`, action: 'already there' });
        else await act(`table ${statement.table}`, 'created', 'would create', [statement.sql]);
      } else if (statement.kind === 'index' && statement.table === owned) {
        await setUpIndex(statement, {
          exists,
          matched: async (index) => (await missingIndexes(pool, [index])).length === 0,
          query,
          act,
          actions,
          tableExists: await exists(owned),
        });
      } else if (statement.kind === 'drop-index' && (await exists(statement.name))) {
        await act(`index ${statement.name} (an earlier version's)`, 'dropped', 'would drop', [
          concurrently(statement.sql),
        ]);
      }
    }
    const registryIndexes = statements.filter((s): s is ExpectedIndex => s.kind === 'index' && s.table !== owned);
    const registryMissing = await missingIndexes(pool, registryIndexes).catch(() => registryIndexes);
    return {
      changed: actions.some((a) => a.action !== 'already there'),
      actions,
      registryStatements: registryMissing.map((index) => `${concurrently(index.sql)};`),
      brokerCommands: brokerCommands(settings),
    };
  } finally {
    await pool.end();
  }
}

interface IndexContext {
  exists: (name: string) => Promise<boolean>;
  /** Whether a valid index of that definition is there, under any name. */
  matched: (index: ExpectedIndex) => Promise<boolean>;
  query: (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;
  act: (object: string, done: SetupAction['action'], would: SetupAction['action'], sql: string[]) => Promise<void>;
  actions: SetupAction[];
  tableExists: boolean;
}

async function setUpIndex(index: ExpectedIndex, context: IndexContext): Promise<void> {
  const object = `index ${index.name} on ${index.table}`;
  if (context.tableExists && (await context.matched(index))) {
    context.actions.push({ object, action: 'already there' });
    return;
  }
  const schema = index.table.includes('.') ? `${index.table.split('.')[0]}.` : '';
  const qualified = `${schema}${index.name}`;
  if (!context.tableExists || !(await context.exists(qualified))) {
    return context.act(object, 'created', 'would create', [concurrently(index.sql)]);
  }
  const [state] = await context.query('SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = to_regclass($1)', [
    qualified,
  ]);
  if (state?.valid) {
    throw new FairwayError(
      `NXRG has an index named ${qualified} that is not the one Fairway needs (${index.sql}): drop or rename it, then run fairway setup again`,
    );
  }
  // A concurrent build that failed leaves an invalid index that IF NOT EXISTS would keep.
  await context.act(object, 'rebuilt', 'would rebuild', [
    `DROP INDEX CONCURRENTLY IF EXISTS ${qualified}`,
    concurrently(index.sql),
  ]);
}

/** The broker user Fairway connects as, and what it needs, as commands for the broker's operator. */
function brokerCommands(settings: SetupSettings): string[] {
  const user = settings.AMQP_URL && new URL(settings.AMQP_URL).username ? amqpUser(settings.AMQP_URL) : 'fairway';
  const vhost = settings.RABBITMQ_VHOST;
  return [
    `rabbitmqctl add_user '${user}' '<password from the RABBITMQ_SECRET_ARN secret>'`,
    `rabbitmqctl set_user_tags '${user}' management`,
    setPermissionsCommand(vhost, user),
    `# Amazon MQ has no rabbitmqctl: the same through its management API, e.g. PUT /api/permissions/<vhost>/${user} with ${JSON.stringify(brokerPermissions)}`,
  ];
}
