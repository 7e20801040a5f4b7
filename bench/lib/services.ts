import { Pool } from 'pg';
import { services } from '../../test/harness/services';

/**
 * Benchmarks reach the same services as the integration tests (TEST_* variables, or the
 * development machine's defaults) and isolate themselves the same way: a vhost or schema of
 * their own, removed at the end. The test harness's helpers name things after the jest test
 * file, so benches name theirs here.
 */
export { services };

export function benchName(bench: string): string {
  return `fairway_bench_${bench}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
}

export interface BenchVhost {
  vhost: string;
  amqpUrl: string;
  managementUrl: string;
  delete(): Promise<void>;
}

export async function createBenchVhost(bench: string): Promise<BenchVhost> {
  const vhost = benchName(bench);
  const path = `/api/vhosts/${encodeURIComponent(vhost)}`;
  await management('PUT', path);
  const user = decodeURIComponent(new URL(services.managementUrl).username);
  await management('PUT', `/api/permissions/${encodeURIComponent(vhost)}/${encodeURIComponent(user)}`, {
    configure: '.*',
    write: '.*',
    read: '.*',
  });
  const amqp = new URL(services.amqpUrl);
  amqp.pathname = `/${encodeURIComponent(vhost)}`;
  return { vhost, amqpUrl: amqp.toString(), managementUrl: services.managementUrl, delete: () => management('DELETE', path) };
}

export interface BenchSchema {
  schema: string;
  /** Connection string whose sessions use the schema first (search_path). */
  url: string;
  pool: Pool;
  drop(): Promise<void>;
}

export async function createBenchSchema(bench: string): Promise<BenchSchema> {
  const schema = benchName(bench);
  const admin = new Pool({ connectionString: services.databaseUrl, max: 1 });
  await admin.query(`CREATE SCHEMA "${schema}"`).catch(async (error: Error) => {
    await admin.end();
    throw new Error(`PostgreSQL is not reachable (${error.message}); run \`bash .ci/run\` once to start it`);
  });
  const url = new URL(services.databaseUrl);
  url.searchParams.set('options', `-c search_path="${schema}"`);
  const pool = new Pool({ connectionString: url.toString(), max: 8 });
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

async function management(method: string, path: string, body?: unknown): Promise<void> {
  const base = new URL(services.managementUrl);
  const authorization = `Basic ${Buffer.from(`${decodeURIComponent(base.username)}:${decodeURIComponent(base.password)}`).toString('base64')}`;
  const response = await fetch(`${base.protocol}//${base.host}${path}`, {
    method,
    headers: { authorization, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).catch((error: Error) => {
    throw new Error(`RabbitMQ management API is not reachable (${error.message}); run \`bash .ci/run\` once to start it`);
  });
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
}
