import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connect } from 'amqplib';
import { Client } from 'pg';
import { managementApi } from '../../local/management-api';
import { rabbitmq4Services, type ServiceName, services, serviceUnavailable } from './services';
import { tlsServiceProblems } from './tls';

/**
 * Runs once before any test file: every service the integration tests need (the TLS ones and the
 * RabbitMQ 4.0 node too) must answer, or the run stops here with a message naming the one that is
 * missing (tests never skip).
 */
export default async function checkServices(): Promise<void> {
  const [problems, tlsProblems] = await Promise.all([
    Promise.all([
      probe('RabbitMQ', async () => (await connect(services.amqpUrl, { timeout: 5_000 })).close()),
      probe('RabbitMQ management API', () => managementApi(services.managementUrl)('GET', '/api/overview')),
      probe('RabbitMQ 4.0 node', async () => (await connect(rabbitmq4Services.amqpUrl, { timeout: 5_000 })).close()),
      probe('RabbitMQ 4.0 node (management API)', () =>
        managementApi(rabbitmq4Services.managementUrl)('GET', '/api/overview'),
      ),
      probe('PostgreSQL', async () => {
        const client = new Client({ connectionString: services.databaseUrl, connectionTimeoutMillis: 5_000 });
        await client.connect();
        await client.end();
      }),
    ]),
    // The TLS services of .ci/services.sh: a missing one fails the run, naming it (issue 26).
    tlsServiceProblems(),
  ]);
  const missing = [...problems.filter((problem): problem is Error => problem !== undefined), ...tlsProblems];
  if (missing.length > 0) throw new Error(missing.map((error) => error.message).join('\n'));
  // Test files run in parallel and several run bin/fairway, which rebuilds dist/fairway.cjs when a
  // source is newer: built here once, so no file reads a build another one is writing.
  await promisify(execFile)(process.execPath, [join(__dirname, '../../bin/fairway'), '--help']);
}

async function probe(service: ServiceName, check: () => Promise<unknown>) {
  try {
    await check();
    return undefined;
  } catch (error) {
    return serviceUnavailable(service, error);
  }
}
