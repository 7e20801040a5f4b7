import { createVhost, type Vhost } from '../../local/vhost';
import { services, serviceUnavailable, uniqueName } from './services';

export type TestVhost = Vhost;

/** A RabbitMQ vhost of this test file's own (or of the given name), deleted by the caller at the end. */
export async function createTestVhost(name = uniqueName('fairway')): Promise<TestVhost> {
  try {
    return await createVhost(services.amqpUrl, services.managementUrl, name);
  } catch (error) {
    throw serviceUnavailable('RabbitMQ management API', error);
  }
}
