/**
 * Where the integration tests find the real services. Defaults match the development
 * machine and `.ci/run`; override with the TEST_* variables. Tests never skip when a
 * service is missing: they fail with `serviceUnavailable`, which says how to start it.
 */
export const services = {
  amqpUrl: process.env.TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
  managementUrl: process.env.TEST_RABBITMQ_MANAGEMENT_URL ?? 'http://guest:guest@127.0.0.1:15672',
  databaseUrl: process.env.TEST_DATABASE_URL ?? 'postgres://postgres:postgres@127.0.0.1:5432/postgres',
};

export function serviceUnavailable(service: 'RabbitMQ' | 'RabbitMQ management API' | 'PostgreSQL', cause: unknown) {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new Error(
    `${service} is not reachable (${reason}). Integration tests need it running: ` +
      'run `bash .ci/run` once, which installs and starts RabbitMQ (with its management plugin) and PostgreSQL.',
  );
}

/** A name unique to this test file and run, safe for vhosts, schemas and queues. */
export function uniqueName(prefix: string): string {
  const file = (expect.getState().testPath ?? 'test').split('/').pop()!.replace(/\W+/g, '_').toLowerCase();
  return `${prefix}_${file}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
}
