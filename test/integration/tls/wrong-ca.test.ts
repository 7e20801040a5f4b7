import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';
import { lambdaNode } from '../../harness/lambda-node';
import { holdOwnNode } from '../../harness/own-node-holds';
import { tlsServices } from '../../harness/services';
import { createTlsSchema, type TlsSchema } from '../../harness/tls';
import { afterProcessEvent, type TlsBroker, tlsBroker } from './fixture';

holdOwnNode('shared');

/** Node's words for a server certificate that does not chain to a trusted CA. */
const untrusted =
  /self-signed certificate in certificate chain|unable to (verify the first|get local issuer) certificate/;

// Verification stays on whatever the CA: a server whose certificate no trusted CA signed is
// refused, and the error names the connection (service and URL, or the URL variable) and why.
describe('a server certificate from a CA Fairway was not given is refused, naming the connection', () => {
  let broker: TlsBroker;
  let dynamo: EmbeddedDynamo;
  let nxrg: TlsSchema;
  const lambda = lambdaNode();
  beforeAll(async () => {
    [broker, dynamo, nxrg] = await Promise.all([tlsBroker(), startDynamo(), createTlsSchema()]);
    await dynamo.createTables();
    await broker.declare('worker-in', { 'x-max-priority': 10 });
  });
  afterAll(async () => {
    lambda.close();
    await Promise.all([broker?.close(), dynamo?.stop(), nxrg?.drop()]);
  });

  it.each([
    ['a CA that did not sign it', tlsServices.wrongCaFile],
    ['no CA at all (Node’s bundled ones only, as on Lambda by default)', undefined],
  ])(
    'AMQPS, router, %s: the batch fails naming RabbitMQ and its amqps:// URL, nothing staged',
    async (_label, caFile) => {
      const { NODE_EXTRA_CA_CERTS: _trusted, ...withoutCa } = broker.env();
      const env = {
        ...withoutCa,
        ...(caFile ? { NODE_EXTRA_CA_CERTS: caFile } : {}),
        // The target's shape is given, so only the AMQPS connection is tried.
        ROUTER_TARGETS: JSON.stringify({ 'worker-in': { arguments: { 'x-max-priority': 10 } } }),
      };
      const run = await broker.run('router', env, [afterProcessEvent([['worker-in', 't1', 'one']])]);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/Cannot connect to RabbitMQ at amqps:\/\/[^ ]*127\.0\.0\.1:5681/);
      expect(run.stderr).toMatch(untrusted);
      expect(run.stderr).not.toContain('guest:guest');
      const queues = await broker.rabbit.api<{ name: string }[]>(
        'GET',
        `/api/queues/${encodeURIComponent(broker.rabbit.vhost)}?columns=name`,
      );
      expect(queues.map((queue) => queue.name)).toEqual(['worker-in']);
    },
  );

  it('HTTPS management, distributor: the pass fails naming the management API and its https:// URL', async () => {
    const run = await broker.run('distributor', broker.env(tlsServices.wrongCaFile));
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/RabbitMQ management API at https:\/\/127\.0\.0\.1:15681\/? is not reachable/);
    expect(run.stderr).toMatch(untrusted);
  });

  const cleanupEnv = (nxrgUrl: string, extra: Record<string, string> = {}) => ({
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    CLEANUP_TABLE: 'CleanupStackTable',
    NXRG_DATABASE_URL: nxrgUrl,
    OPENXDS_DATABASE_URL: nxrg.url,
    ...extra,
  });

  it.each([
    ['NODE_EXTRA_CA_CERTS', () => cleanupEnv(nxrg.url, { NODE_EXTRA_CA_CERTS: tlsServices.wrongCaFile })],
    ['sslrootcert', () => cleanupEnv(nxrg.urlWithRootCert(tlsServices.wrongCaFile))],
  ])('PostgreSQL, a wrong CA in %s: the step fails naming NXRG_DATABASE_URL', async (_label, env) => {
    const run = await lambda.run('registry-status90-cleanup', env());
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('NXRG database (NXRG_DATABASE_URL): ');
    expect(run.stderr).toMatch(untrusted);
    expect(run.stderr).not.toContain('postgres:postgres');
  });

  it('PostgreSQL without sslmode: the server refuses the plaintext connection, naming NXRG_DATABASE_URL', async () => {
    const url = new URL(nxrg.url);
    url.searchParams.delete('sslmode');
    const run = await lambda.run('registry-status90-cleanup', cleanupEnv(url.toString()));
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('NXRG database (NXRG_DATABASE_URL): ');
    expect(run.stderr).toContain('no encryption');
  });
});
