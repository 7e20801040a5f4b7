/**
 * Where the integration tests find the real services. Defaults match the development
 * machine and `.ci/run`; override with the TEST_* variables. Tests never skip when a
 * service is missing: they fail with `serviceUnavailable`, which says how to start it.
 */
/**
 * The RabbitMQ 4.0 node `.ci/services.sh` starts beside the machine-wide 3.10 one (issue 36). The
 * `integration-rabbitmq4` jest project runs the broker-facing suites again with `services` pointing
 * at it: its setup file (test/harness/on-rabbitmq4.ts) sets TEST_ON_RABBITMQ4 for each of its files.
 */
export const rabbitmq4Services = {
  amqpUrl: process.env.TEST_RABBITMQ4_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5691',
  managementUrl: process.env.TEST_RABBITMQ4_MANAGEMENT_URL ?? 'http://guest:guest@127.0.0.1:15691',
};

/** This test file runs on the RabbitMQ 4.0 node. */
export const onRabbitmq4 = process.env.TEST_ON_RABBITMQ4 === '1';

export const services = {
  amqpUrl: onRabbitmq4 ? rabbitmq4Services.amqpUrl : (process.env.TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672'),
  managementUrl: onRabbitmq4
    ? rabbitmq4Services.managementUrl
    : (process.env.TEST_RABBITMQ_MANAGEMENT_URL ?? 'http://guest:guest@127.0.0.1:15672'),
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
  | 'RabbitMQ 4.0 node'
  | 'RabbitMQ 4.0 node (management API)'
  | 'PostgreSQL'
  | 'TLS CA files'
  | 'TLS RabbitMQ node (AMQPS)'
  | 'TLS RabbitMQ node (HTTPS management API)'
  | 'TLS RabbitMQ node (plain listeners)'
  | 'TLS PostgreSQL cluster';

export function serviceUnavailable(service: ServiceName, cause: unknown) {
  // fetch's own message is "fetch failed": the socket error is its cause (an Error of another realm).
  const error = cause as { message?: string; cause?: { message?: string } } | undefined;
  const reason = error?.message
    ? `${error.message}${error.cause?.message ? `: ${error.cause.message}` : ''}`
    : String(cause);
  return new Error(
    `${service} is not reachable (${reason}). Integration tests need it running: ` +
      'run `bash .ci/run` once, which installs and starts RabbitMQ (with its management plugin) and PostgreSQL, ' +
      'the TLS services of the tests’ own (a CA in /tmp/fairway-tls, RabbitMQ node fairway-tls, PostgreSQL cluster fairway_tls) ' +
      'and their RabbitMQ 4.0 node (fairway-rmq4, a chroot in /var/cache/fairway/rabbitmq4-trixie).',
  );
}

/** A name unique to this test file and run, safe for vhosts, schemas and queues. */
export function uniqueName(prefix: string): string {
  const file = (expect.getState().testPath ?? 'test').split('/').pop()!.replace(/\W+/g, '_').toLowerCase();
  return `${prefix}_${file}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
}
