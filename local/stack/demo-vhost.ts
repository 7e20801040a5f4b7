import { connect } from 'amqplib';
import { redactUrl } from '../../lib/platform/config';
import { managementApi } from '../management-api';
import { createVhost, type Vhost } from '../vhost';

export type DemoVhost = Vhost;

const howToStart =
  'Start a local RabbitMQ with its management plugin, e.g. on Debian: ' +
  '`apt-get install -y rabbitmq-server && rabbitmq-plugins enable rabbitmq_management && rabbitmq-server -detached` ' +
  '(or `bash .ci/run`), or point AMQP_URL and RABBITMQ_MANAGEMENT_URL at a running one.';

/**
 * A RabbitMQ vhost of the local stack's own, deleted on exit, so that `npm start` never touches
 * the broker's other queues. A broker whose management API or AMQP port does not answer is
 * reported with how to start one.
 */
export async function createDemoVhost(amqpUrl: string, managementUrl: string, vhost: string): Promise<DemoVhost> {
  try {
    await managementApi(managementUrl)('GET', '/api/overview');
  } catch (error) {
    throw new Error(
      `RabbitMQ's management API is not reachable at ${redactUrl(managementUrl)} (${(error as Error).message}). ${howToStart}`,
    );
  }
  const created = await createVhost(amqpUrl, managementUrl, vhost);
  try {
    const connection = await connect(created.amqpUrl, { timeout: 5_000 });
    await connection.close();
  } catch (error) {
    await created.delete().catch(() => undefined);
    throw new Error(
      `RabbitMQ does not answer AMQP at ${redactUrl(amqpUrl)} (${(error as Error).message}). ${howToStart}`,
    );
  }
  return created;
}
