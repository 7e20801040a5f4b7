import { connect } from 'amqplib';
import { Client } from 'pg';
import { managementApi } from '../../local/management-api';
import { services, serviceUnavailable } from './services';

/**
 * Runs once before any test file: every service the integration tests need must answer, or the
 * run stops here with a message naming the one that is missing (tests never skip).
 */
export default async function checkServices(): Promise<void> {
  const problems = await Promise.all([
    probe('RabbitMQ', async () => (await connect(services.amqpUrl, { timeout: 5_000 })).close()),
    probe('RabbitMQ management API', () => managementApi(services.managementUrl)('GET', '/api/overview')),
    probe('PostgreSQL', async () => {
      const client = new Client({ connectionString: services.databaseUrl, connectionTimeoutMillis: 5_000 });
      await client.connect();
      await client.end();
    }),
  ]);
  const missing = problems.filter((problem): problem is Error => problem !== undefined);
  if (missing.length > 0) throw new Error(missing.map((error) => error.message).join('\n'));
}

async function probe(service: Parameters<typeof serviceUnavailable>[0], check: () => Promise<unknown>) {
  try {
    await check();
    return undefined;
  } catch (error) {
    return serviceUnavailable(service, error);
  }
}
