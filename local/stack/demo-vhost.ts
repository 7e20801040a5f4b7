import { redactUrl } from '../../lib/rabbitmq/redact';
import { managementApi } from '../management-api';

/**
 * A RabbitMQ vhost of the local stack's own, created through the management API and deleted on
 * exit, so that `npm start` never touches the broker's other queues.
 */
export interface DemoVhost {
  vhost: string;
  /** AMQP URL for the vhost (with the given credentials). */
  amqpUrl: string;
  managementUrl: string;
  delete(): Promise<void>;
}

const howToStart =
  'Start a local RabbitMQ with its management plugin, e.g. on Debian: ' +
  '`apt-get install -y rabbitmq-server && rabbitmq-plugins enable rabbitmq_management && rabbitmq-server -detached` ' +
  '(or `bash .ci/run`), or point AMQP_URL and RABBITMQ_MANAGEMENT_URL at a running one.';

export async function createDemoVhost(amqpUrl: string, managementUrl: string, vhost: string): Promise<DemoVhost> {
  const api = managementApi(managementUrl);
  try {
    await api('GET', '/api/overview');
  } catch (error) {
    throw new Error(
      `RabbitMQ's management API is not reachable at ${redactUrl(managementUrl)} (${(error as Error).message}). ${howToStart}`,
    );
  }
  await api('PUT', `/api/vhosts/${encodeURIComponent(vhost)}`, { description: 'Fairway npm start (deleted on exit)' });
  const user = decodeURIComponent(new URL(managementUrl).username) || 'guest';
  await api('PUT', `/api/permissions/${encodeURIComponent(vhost)}/${encodeURIComponent(user)}`, {
    configure: '.*',
    write: '.*',
    read: '.*',
  });
  const url = new URL(amqpUrl);
  url.pathname = `/${encodeURIComponent(vhost)}`;
  return {
    vhost,
    amqpUrl: url.toString(),
    managementUrl,
    delete: () => api('DELETE', `/api/vhosts/${encodeURIComponent(vhost)}`).then(() => undefined),
  };
}
