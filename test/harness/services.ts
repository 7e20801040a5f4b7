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

const tlsDir = process.env.TEST_TLS_DIR ?? '/tmp/fairway-tls';

/**
 * The TLS services `.ci/services.sh` starts beside the machine-wide ones (issue 26): a RabbitMQ node
 * of the tests' own (AMQPS and HTTPS management; plain loopback listeners too, for the test that
 * restarts it) and a PostgreSQL cluster that refuses connections without TLS, with certificates
 * for 127.0.0.1 signed by `caFile`. `wrongCaFile` is a CA that signed none of them.
 */
export const tlsServices = {
  caFile: `${tlsDir}/ca.pem`,
  wrongCaFile: `${tlsDir}/wrong-ca.pem`,
  amqpsUrl: process.env.TEST_TLS_AMQPS_URL ?? 'amqps://guest:guest@127.0.0.1:5681',
  managementUrl: process.env.TEST_TLS_RABBITMQ_MANAGEMENT_URL ?? 'https://guest:guest@127.0.0.1:15681',
  /** No sslmode here: each test says how it verifies (sslmode=verify-full, with or without sslrootcert). */
  databaseUrl: process.env.TEST_TLS_DATABASE_URL ?? 'postgres://postgres:postgres@127.0.0.1:5442/postgres',
  /** The node's name for `rabbitmqctl -n`, and its plain listeners (loopback only). */
  rabbitmqNode: process.env.TEST_TLS_RABBITMQ_NODE ?? 'fairway-tls@localhost',
  plainAmqpUrl: process.env.TEST_TLS_PLAIN_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5682',
  plainManagementUrl: process.env.TEST_TLS_PLAIN_MANAGEMENT_URL ?? 'http://guest:guest@127.0.0.1:15682',
};

export type ServiceName =
  | 'RabbitMQ'
  | 'RabbitMQ management API'
  | 'PostgreSQL'
  | 'TLS CA files'
  | 'TLS RabbitMQ node (AMQPS)'
  | 'TLS RabbitMQ node (HTTPS management API)'
  | 'TLS RabbitMQ node (plain listeners)'
  | 'TLS PostgreSQL cluster';

export function serviceUnavailable(service: ServiceName, cause: unknown) {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new Error(
    `${service} is not reachable (${reason}). Integration tests need it running: ` +
      'run `bash .ci/run` once, which installs and starts RabbitMQ (with its management plugin) and PostgreSQL, ' +
      'and the TLS services of the tests’ own (a CA in /tmp/fairway-tls, RabbitMQ node fairway-tls, PostgreSQL cluster fairway_tls).',
  );
}

/** A name unique to this test file and run, safe for vhosts, schemas and queues. */
export function uniqueName(prefix: string): string {
  const file = (expect.getState().testPath ?? 'test').split('/').pop()!.replace(/\W+/g, '_').toLowerCase();
  return `${prefix}_${file}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
}
