import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { promisify } from 'node:util';
import { type ChannelModel, connect } from 'amqplib';
import { Pool } from 'pg';
import { managementPath } from '../../lib/rabbitmq/management';
import { managementApi } from '../../local/management-api';
import { createVhost, type Vhost } from '../../local/vhost';
import { type ServiceName, serviceUnavailable, tlsServices, uniqueName } from './services';

/**
 * The test side of the TLS services (test/harness/services.ts `tlsServices`): vhosts on the tests'
 * own RabbitMQ node and schemas on the TLS-only PostgreSQL cluster, reached from the jest process
 * with the CA given explicitly. Fairway itself is pointed at the CA the way Lambda is, through
 * NODE_EXTRA_CA_CERTS, in a process of its own (test/harness/lambda-node.ts).
 */

export const readCa = (file = tlsServices.caFile): string => readFileSync(file, 'utf8');

/** Calls the HTTPS management API trusting `ca` only (Node's fetch takes no CA); throws on a non-2xx answer. */
export function httpsManagementApi(baseUrl: string, ca: string) {
  const base = new URL(baseUrl);
  const auth = `${decodeURIComponent(base.username)}:${decodeURIComponent(base.password)}`;
  return <T = unknown>(method: string, path: string, body?: unknown): Promise<T> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        {
          host: base.hostname,
          port: base.port,
          path,
          method,
          auth,
          ca,
          timeout: 10_000,
          headers: {
            'content-type': 'application/json',
            ...(payload ? { 'content-length': Buffer.byteLength(payload) } : {}),
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => {
            if ((res.statusCode ?? 500) >= 300)
              reject(new Error(`${method} ${path.split('?')[0]} answered ${res.statusCode}: ${text.slice(0, 200)}`));
            else resolve((text ? JSON.parse(text) : undefined) as T);
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on('error', reject);
      req.end(payload);
    });
}

/** A vhost of the test's own on the TLS node, by its TLS and its plain listeners. */
export interface TlsVhost {
  vhost: string;
  /** amqps:// URL of this vhost (no CA in it: amqplib takes none from a URL). */
  amqpsUrl: string;
  /** https:// management base URL, with credentials (as Fairway's adapters take it). */
  managementUrl: string;
  /** The same vhost on the node's plain loopback listeners. */
  plainAmqpUrl: string;
  plainManagementUrl: string;
  /** Management calls over HTTPS, trusting the test CA. */
  api<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  /** An AMQPS connection to this vhost that trusts the test CA (the test's own set-up and checks). */
  connect(): Promise<ChannelModel>;
  delete(): Promise<void>;
}

const withVhost = (url: string, vhost: string) => {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(vhost)}`;
  return parsed.toString();
};

export async function createTlsVhost(name = uniqueName('fairway_tls')): Promise<TlsVhost> {
  const ca = readTlsCa();
  const api = httpsManagementApi(tlsServices.managementUrl, ca);
  const path = managementPath('api', 'vhosts', name);
  try {
    await api('PUT', path);
    await api('PUT', managementPath('api', 'permissions', name, 'guest'), { configure: '.*', write: '.*', read: '.*' });
  } catch (error) {
    throw serviceUnavailable('TLS RabbitMQ node (HTTPS management API)', error);
  }
  const amqpsUrl = withVhost(tlsServices.amqpsUrl, name);
  return {
    vhost: name,
    amqpsUrl,
    managementUrl: tlsServices.managementUrl,
    plainAmqpUrl: withVhost(tlsServices.plainAmqpUrl, name),
    plainManagementUrl: tlsServices.plainManagementUrl,
    api,
    connect: () => connect(amqpsUrl, { ca: [ca], timeout: 5_000 }),
    delete: () => api('DELETE', path).then(() => undefined),
  };
}

/** A schema of the test's own on the TLS-only PostgreSQL cluster. */
export interface TlsSchema {
  schema: string;
  /**
   * Its connection string with `sslmode=verify-full` and no CA: the server's certificate must chain
   * to a CA Node trusts (on Lambda, NODE_EXTRA_CA_CERTS).
   */
  url: string;
  /** The same with `sslrootcert` naming `caFile`: pg reads the CA from that file (the other way). */
  urlWithRootCert(caFile?: string): string;
  /** A pool on it for the test's own set-up and checks (verify-full against the test CA). */
  pool: Pool;
  drop(): Promise<void>;
}

export async function createTlsSchema(schema = uniqueName('fairway_tls'), poolSize = 4): Promise<TlsSchema> {
  const verified = (search: string | undefined, caFile?: string) => {
    const url = new URL(tlsServices.databaseUrl);
    url.searchParams.set('sslmode', 'verify-full');
    if (caFile) url.searchParams.set('sslrootcert', caFile);
    if (search) url.searchParams.set('options', `-c search_path="${search}"`);
    return url.toString();
  };
  readTlsCa();
  const admin = new Pool({ connectionString: verified(undefined, tlsServices.caFile), max: 1 });
  try {
    await admin.query(`CREATE SCHEMA "${schema}"`);
  } catch (error) {
    await admin.end();
    throw serviceUnavailable('TLS PostgreSQL cluster', error);
  }
  const pool = new Pool({ connectionString: verified(schema, tlsServices.caFile), max: poolSize });
  return {
    schema,
    url: verified(schema),
    urlWithRootCert: (caFile = tlsServices.caFile) => verified(schema, caFile),
    pool,
    async drop() {
      await pool.end();
      await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
      await admin.end();
    },
  };
}

function readTlsCa(): string {
  try {
    return readCa();
  } catch (error) {
    throw serviceUnavailable('TLS CA files', error);
  }
}

/** Every TLS service answers with certificate verification on, or the name of each that does not. */
export async function tlsServiceProblems(): Promise<Error[]> {
  let ca: string;
  try {
    ca = readCa();
    readCa(tlsServices.wrongCaFile);
  } catch (error) {
    return [serviceUnavailable('TLS CA files', error)];
  }
  const probe = async (service: ServiceName, check: () => Promise<unknown>) => {
    try {
      await check();
      return undefined;
    } catch (error) {
      return serviceUnavailable(service, error);
    }
  };
  const url = new URL(tlsServices.databaseUrl);
  url.searchParams.set('sslmode', 'verify-full');
  url.searchParams.set('sslrootcert', tlsServices.caFile);
  const problems = await Promise.all([
    probe('TLS RabbitMQ node (AMQPS)', async () =>
      (await connect(tlsServices.amqpsUrl, { ca: [ca], timeout: 5_000 })).close(),
    ),
    probe('TLS RabbitMQ node (HTTPS management API)', () =>
      httpsManagementApi(tlsServices.managementUrl, ca)('GET', '/api/overview'),
    ),
    probe('TLS RabbitMQ node (plain listeners)', async () => {
      await (await connect(tlsServices.plainAmqpUrl, { timeout: 5_000 })).close();
      await managementApi(tlsServices.plainManagementUrl)('GET', '/api/overview');
    }),
    probe('TLS PostgreSQL cluster', async () => {
      const pool = new Pool({ connectionString: url.toString(), max: 1, connectionTimeoutMillis: 5_000 });
      try {
        await pool.query('SELECT 1');
      } finally {
        await pool.end();
      }
    }),
  ]);
  return problems.filter((problem): problem is Error => problem !== undefined);
}

/**
 * A vhost on the plain loopback listeners of the tests' own RabbitMQ node: for a test that restarts
 * the broker, which must never be the machine-wide one: a test restarts only what it started.
 */
export async function createOwnNodeVhost(name = uniqueName('fairway_own')): Promise<Vhost> {
  try {
    return await createVhost(tlsServices.plainAmqpUrl, tlsServices.plainManagementUrl, name);
  } catch (error) {
    throw serviceUnavailable('TLS RabbitMQ node (plain listeners)', error);
  }
}

const rabbitmqctl = (...args: string[]) =>
  promisify(execFile)('rabbitmqctl', ['-n', tlsServices.rabbitmqNode, ...args], { timeout: 60_000 });

/** Stops and starts the RabbitMQ application of the tests' own node (its Erlang VM stays up), every connection dropped. */
export async function restartOwnNode(): Promise<void> {
  await rabbitmqctl('stop_app');
  await rabbitmqctl('start_app');
  await rabbitmqctl('await_startup');
}
