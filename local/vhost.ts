import { managementPath } from '../lib/rabbitmq/management';
import { managementApi } from './management-api';

/** A RabbitMQ vhost of its own, for the local stack, a test file or a benchmark. */
export interface Vhost {
  vhost: string;
  /** AMQP URL for this vhost, e.g. for `amqplib.connect`. */
  amqpUrl: string;
  /** Management API base URL (credentials in the URL, as the adapters take it). */
  managementUrl: string;
  /** Calls the management API with the URL's credentials; throws on a non-2xx answer. */
  api<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  delete(): Promise<void>;
}

/** Creates `vhost` through the management API and gives the URL's user every permission on it. */
export async function createVhost(amqpUrl: string, managementUrl: string, vhost: string): Promise<Vhost> {
  const api = managementApi(managementUrl);
  const path = managementPath('api', 'vhosts', vhost);
  await api('PUT', path);
  const user = decodeURIComponent(new URL(managementUrl).username) || 'guest';
  await api('PUT', managementPath('api', 'permissions', vhost, user), {
    configure: '.*',
    write: '.*',
    read: '.*',
  });
  const amqp = new URL(amqpUrl);
  amqp.pathname = `/${encodeURIComponent(vhost)}`;
  return {
    vhost,
    amqpUrl: amqp.toString(),
    managementUrl,
    api,
    delete: () => api('DELETE', path).then(() => undefined),
  };
}
