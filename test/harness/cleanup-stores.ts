import { defaultNxrgNames } from '../../lib/cleanup/nxrg/names';
import { nxrgSchemaSql } from '../../lib/cleanup/nxrg/schema';
import { defaultOpenxdsNames } from '../../lib/cleanup/openxds/names';
import { openxdsSchemaSql } from '../../lib/cleanup/openxds/schema';
import { type EmbeddedDynamo, startDynamo } from './dynamo';
import { createTestSchema, type TestSchema } from './postgres';

/** What a repository-cleanup test runs on: dynalite with the deployed tables, NXRG and OpenXDS with the default names. */
export interface CleanupStores {
  dynamo: EmbeddedDynamo;
  nxrg: TestSchema;
  openxds: TestSchema;
  stop(): Promise<void>;
}

/** Starts the three stores at once, with their tables created. */
export async function startCleanupStores(): Promise<CleanupStores> {
  const [dynamo, nxrg, openxds] = await Promise.all([startDynamo(), createTestSchema(), createTestSchema()]);
  await dynamo.createTables();
  await nxrg.pool.query(nxrgSchemaSql(defaultNxrgNames));
  await openxds.pool.query(openxdsSchemaSql(defaultOpenxdsNames));
  return {
    dynamo,
    nxrg,
    openxds,
    async stop() {
      await Promise.all([dynamo.stop(), nxrg.drop(), openxds.drop()]);
    },
  };
}
