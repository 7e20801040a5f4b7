import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultOpenxdsNames } from '../../../lib/cleanup/openxds/names';
import { openxdsSchemaSql } from '../../../lib/cleanup/openxds/schema';

const shipped = (file: string) => readFileSync(join(__dirname, '../../../infra/sql', file), 'utf8');

describe('shipped OpenXDS SQL schema', () => {
  // The files in infra/sql are what a DBA applies; they must be exactly what the adapters expect.
  it('infra/sql/openxds.sql is the schema rendered with the default names', () => {
    expect(shipped('openxds.sql')).toBe(openxdsSchemaSql(defaultOpenxdsNames));
  });
});
