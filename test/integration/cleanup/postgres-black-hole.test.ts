import { type EngineTuning, loadCleanupConfig } from '../../../lib/cleanup/config';
import type { JobDatabases } from '../../../lib/cleanup/jobs';
import { defaultOpenxdsNames } from '../../../lib/cleanup/openxds/names';
import { OpenxdsRepository } from '../../../lib/cleanup/openxds/repository';
import { DatabaseError, errorText } from '../../../lib/platform/errors';
import { POSTGRES_TIMEOUT_DEFAULT_SECONDS } from '../../../lib/platform/network-bounds';
import { databaseSettings, jobDatabases } from '../../../lib/wiring/cleanup';
import { blackHole, endingOf, type StallingProxy, stallingProxy, type TcpServer } from '../../harness/black-hole';
import { silentCleanupReport as report } from '../../harness/cleanup-report';
import { services } from '../../harness/services';

/** The cleanup functions' timeout (serverless.yml's default cleanupTimeoutSeconds). */
const CLEANUP_TIMEOUT_MS = 120_000;

/** The pools a cleanup function builds, from its environment as it reads it. */
function databasesFor(nxrgUrl: string, openxdsUrl: string, tuning: Partial<EngineTuning> = {}): JobDatabases {
  const config = loadCleanupConfig(
    { CLEANUP_TABLE: 'CleanupStackTable', NXRG_DATABASE_URL: nxrgUrl, OPENXDS_DATABASE_URL: openxdsUrl },
    tuning,
  );
  return jobDatabases(databaseSettings(config), report);
}

// Issue 26 item 4: the cleanup jobs' PostgreSQL pools bound a connection attempt and a statement
// (connectionTimeoutMillis, query_timeout; the database timeout, at the deployed timeout
// POSTGRES_TIMEOUT_DEFAULT_SECONDS), and the error names the database and its setting.
describe('the cleanup databases against PostgreSQL that accepts and never answers', () => {
  let hole: TcpServer;
  let proxy: StallingProxy;
  beforeAll(async () => {
    const database = new URL(services.databaseUrl);
    [hole, proxy] = await Promise.all([
      blackHole(),
      stallingProxy({ host: database.hostname, port: Number(database.port || 5432) }),
    ]);
  });
  afterAll(() => Promise.all([hole?.close(), proxy?.close()]));

  it('a connection attempt fails with the default bound, naming the database, before the function timeout', async () => {
    const url = `${hole.url('postgres', 'postgres:postgres')}/postgres`;
    const databases = databasesFor(url, url);
    const repository = new OpenxdsRepository(databases.openxds, defaultOpenxdsNames);
    try {
      const ending = await endingOf(repository.presentIds(['00000000-0000-0000-0000-000000000000']), 90_000);
      expect(ending).toMatchObject({ pending: false });
      if (ending.pending) return;
      expect(ending.error).toBeInstanceOf(DatabaseError);
      expect(errorText(ending.error)).toMatch(/^DatabaseError: OpenXDS database \(OPENXDS_DATABASE_URL\): /);
      expect(ending.ms).toBeLessThan(CLEANUP_TIMEOUT_MS);
      expect(ending.ms).toBeGreaterThanOrEqual(POSTGRES_TIMEOUT_DEFAULT_SECONDS * 1000 - 1_000); // the default, not pg's none
    } finally {
      await Promise.all([databases.nxrg.end(), databases.openxds.end()]);
    }
  }, 100_000);

  it('a statement on a connection whose server stops answering fails within the database timeout', async () => {
    const url = new URL(services.databaseUrl);
    url.host = `${proxy.host}:${proxy.port}`;
    const databases = databasesFor(url.toString(), url.toString(), { databaseTimeoutMs: 2_000 });
    const repository = new OpenxdsRepository(databases.openxds, defaultOpenxdsNames);
    try {
      await databases.openxds.query('SELECT 1'); // connected, and the connection kept in the pool
      proxy.stall();
      const ending = await endingOf(repository.presentIds(['00000000-0000-0000-0000-000000000000']), 60_000);
      expect(ending).toMatchObject({ pending: false });
      if (ending.pending) return;
      expect(ending.error).toBeInstanceOf(DatabaseError);
      expect(errorText(ending.error)).toMatch(
        /^DatabaseError: OpenXDS database \(OPENXDS_DATABASE_URL\): Query read timeout/,
      );
      expect(ending.ms).toBeLessThan(5 * 2_000);
    } finally {
      await Promise.all([databases.nxrg.end(), databases.openxds.end()]);
    }
  });
});
