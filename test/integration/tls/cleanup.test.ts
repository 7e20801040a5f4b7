import { DEFAULT_DOCUMENT_TYPES, generateRegistry } from '../../harness/cleanup-registry';
import {
  deceasedDocumentIds,
  expiredDocumentIds,
  type OracleRule,
  repositoryDeletableIds,
} from '../../harness/cleanup-registry-oracle';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';
import { type LambdaRun, lambdaNode } from '../../harness/lambda-node';
import { tlsServices } from '../../harness/services';
import { createTlsSchema, type TlsSchema } from '../../harness/tls';

const RULES: OracleRule[] = [
  { documentType: 'referral', retentionDays: 3650, basis: 'created' },
  { documentType: 'lab-result', retentionDays: 1825, basis: 'service' },
];
/** Invocations of one warm container, each taking up to 50 steps (FAIRWAY_TEST_TUNING below). */
const INVOCATIONS = Array.from({ length: 8 }, () => ({}));

// The three cleanup jobs as Lambda runs them against RDS: PostgreSQL that refuses connections
// without TLS, `sslmode=verify-full` in the URL, the CA from NODE_EXTRA_CA_CERTS or from sslrootcert.
describe('cleanup jobs over TLS (PostgreSQL TLS only, sslmode=verify-full)', () => {
  let dynamo: EmbeddedDynamo;
  let nxrg: TlsSchema;
  let openxds: TlsSchema;
  const lambda = lambdaNode();

  beforeAll(async () => {
    [dynamo, nxrg, openxds] = await Promise.all([startDynamo(), createTlsSchema(), createTlsSchema()]);
    await dynamo.createTables();
    await generateRegistry(nxrg.pool, openxds.pool, {
      seed: 'tls',
      documents: 3_000,
      citizens: 300,
      now: new Date(),
    });
  }, 60_000);
  afterAll(async () => {
    lambda.close();
    await Promise.all([dynamo?.stop(), nxrg?.drop(), openxds?.drop()]);
  });

  const env = (urls: { nxrg: string; openxds: string }, extra: Record<string, string> = {}) => ({
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    CLEANUP_TABLE: 'CleanupStackTable',
    CLEANUP_DRY_RUN: 'false',
    FAIRWAY_TEST_TUNING: JSON.stringify({ stepsPerInvocation: 50 }),
    NXRG_DATABASE_URL: urls.nxrg,
    OPENXDS_DATABASE_URL: urls.openxds,
    NXRG_DOCUMENT_TYPES: DEFAULT_DOCUMENT_TYPES.join(','),
    CLEANUP_TIMEBASED_DOCUMENT_TYPES: JSON.stringify({
      referral: { retentionDays: 3650 },
      'lab-result': { retentionDays: 1825, basis: 'service' },
    }),
    ...extra,
  });
  const byExtraCa = () => ({ nxrg: nxrg.url, openxds: openxds.url });

  /** The run ended well and its steps deleted something. */
  const expectDeleted = (run: LambdaRun) => {
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.results).toHaveLength(INVOCATIONS.length);
    expect(run.logs.filter((line) => line.level === 'ERROR')).toEqual([]);
  };

  it('registry-timebased-cleanup deletes every expired document (CA from NODE_EXTRA_CA_CERTS)', async () => {
    expect((await expiredDocumentIds(nxrg.pool, RULES, new Date())).length).toBeGreaterThan(0);
    const run = await lambda.run(
      'registry-timebased-cleanup',
      env(byExtraCa(), { NODE_EXTRA_CA_CERTS: tlsServices.caFile }),
      INVOCATIONS,
    );
    expectDeleted(run);
    expect(await expiredDocumentIds(nxrg.pool, RULES, new Date())).toEqual([]);
  });

  it('registry-status90-cleanup deletes every deceased citizen’s documents (CA from sslrootcert in the URLs)', async () => {
    expect((await deceasedDocumentIds(nxrg.pool)).length).toBeGreaterThan(0);
    const run = await lambda.run(
      'registry-status90-cleanup',
      env({ nxrg: nxrg.urlWithRootCert(), openxds: openxds.urlWithRootCert() }),
      INVOCATIONS,
    );
    expectDeleted(run);
    expect(await deceasedDocumentIds(nxrg.pool)).toEqual([]);
  });

  it('repository-cleanup deletes in OpenXDS what NXRG recorded as deleted (CA from NODE_EXTRA_CA_CERTS)', async () => {
    expect((await repositoryDeletableIds(nxrg.pool, openxds.pool)).length).toBeGreaterThan(0);
    const run = await lambda.run(
      'repository-cleanup',
      env(byExtraCa(), { NODE_EXTRA_CA_CERTS: tlsServices.caFile }),
      INVOCATIONS,
    );
    expectDeleted(run);
    expect(await repositoryDeletableIds(nxrg.pool, openxds.pool)).toEqual([]);
  });
});
