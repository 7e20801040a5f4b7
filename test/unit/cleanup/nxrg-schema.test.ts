import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultNxrgNames } from '../../../lib/cleanup/nxrg/names';
import { nxrgSchemaSql } from '../../../lib/cleanup/nxrg/schema';

const shipped = (file: string) => readFileSync(join(__dirname, '../../../infra/sql', file), 'utf8');

describe('shipped NXRG SQL schema', () => {
  // The files in infra/sql are what a DBA applies; they must be exactly what the adapters expect.
  it('infra/sql/nxrg.sql is the schema rendered with the default names', () => {
    expect(shipped('nxrg.sql')).toBe(nxrgSchemaSql(defaultNxrgNames));
  });
});
