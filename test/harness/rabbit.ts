import { createVhost, type Vhost } from '../../local/vhost';
import { services, serviceUnavailable, uniqueName } from './services';

export type TestVhost = Vhost;

/**
 * A RabbitMQ vhost of this test file's own (or of the given name), deleted by the caller at the end.
 * Tried three times, a second apart: on a loaded machine a management call now and then fails at
 * the socket (`fetch failed`), and both calls are idempotent.
 */
export async function createTestVhost(name = uniqueName('fairway')): Promise<TestVhost> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await createVhost(services.amqpUrl, services.managementUrl, name);
    } catch (error) {
      if (attempt >= 3 || !(error instanceof TypeError)) throw serviceUnavailable('RabbitMQ management API', error);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}
