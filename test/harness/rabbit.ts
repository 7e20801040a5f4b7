import { managementApi } from '../../local/management-api';
import { serviceUnavailable, services, uniqueName } from './services';

export interface TestVhost {
  vhost: string;
  /** AMQP URL for this vhost, e.g. for `amqplib.connect`. */
  amqpUrl: string;
  /** Management API base URL (credentials in the URL, as the adapters take it). */
  managementUrl: string;
  /** Calls the management API as the test user; throws on a non-2xx answer. */
  api<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  delete(): Promise<void>;
}

/** A RabbitMQ vhost of this test file's own, created and later deleted through the management API. */
export async function createTestVhost(): Promise<TestVhost> {
  const vhost = uniqueName('fairway');
  const api = managementApi(services.managementUrl);
  try {
    await api('PUT', `/api/vhosts/${encodeURIComponent(vhost)}`);
  } catch (error) {
    throw serviceUnavailable('RabbitMQ management API', error);
  }
  const user = decodeURIComponent(new URL(services.managementUrl).username);
  await api('PUT', `/api/permissions/${encodeURIComponent(vhost)}/${encodeURIComponent(user)}`, {
    configure: '.*',
    write: '.*',
    read: '.*',
  });
  const amqp = new URL(services.amqpUrl);
  amqp.pathname = `/${encodeURIComponent(vhost)}`;
  return {
    vhost,
    amqpUrl: amqp.toString(),
    managementUrl: services.managementUrl,
    api,
    delete: () => api('DELETE', `/api/vhosts/${encodeURIComponent(vhost)}`).then(() => undefined),
  };
}
