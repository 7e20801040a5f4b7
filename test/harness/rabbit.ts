import { createVhost, type Vhost } from '../../local/vhost';
import { services, serviceUnavailable, uniqueName } from './services';

export type TestVhost = Vhost;

/**
 * A RabbitMQ vhost of this test file's own (or of the given name), deleted by the caller at the end.
 * Tried three times, a second apart, when the socket fails (`fetch failed`: the first file of a run
 * can meet a keep-alive connection of global-setup.ts's probe that the broker has closed); both
 * calls are idempotent.
 */
export async function createTestVhost(name = uniqueName('fairway')): Promise<TestVhost> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await createVhost(services.amqpUrl, services.managementUrl, name);
    } catch (error) {
      // Matched by message: undici's TypeError is not of the test's realm.
      if (attempt >= 3 || (error as Error | undefined)?.message !== 'fetch failed')
        throw serviceUnavailable('RabbitMQ management API', error);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}
