import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultNxrgNames } from '../../../../lib/nxrg/names';
import { nxrgSchemaSql } from '../../../../lib/nxrg/schema';
import { defaultOpenxdsNames } from '../../../../lib/openxds/names';
import { openxdsSchemaSql } from '../../../../lib/openxds/schema';
import { quoteIdentifier } from '../../../../lib/postgres/identifier';

const shipped = (file: string) => readFileSync(join(__dirname, '../../../../infra/sql', file), 'utf8');

describe('shipped SQL schemas', () => {
  // The files in infra/sql are what a DBA applies; they must be exactly what the adapters expect.
  it('infra/sql/nxrg.sql and openxds.sql are the schemas rendered with the default names', () => {
    expect(shipped('nxrg.sql')).toBe(nxrgSchemaSql(defaultNxrgNames));
    expect(shipped('openxds.sql')).toBe(openxdsSchemaSql(defaultOpenxdsNames));
  });

  it.each([
    ['documents', '"documents"'],
    ['nxrg.documents', '"nxrg"."documents"'],
    ['Doc_2$', '"Doc_2$"'],
  ])('quotes the name %s', (name, quoted) => {
    expect(quoteIdentifier(name)).toBe(quoted);
  });

  it.each(['', 'a.b.c', 'docs"; DROP TABLE x; --', '2docs', 'a b'])('refuses %j as a name', (name) => {
    expect(() => quoteIdentifier(name)).toThrow('Not a valid SQL name');
  });
});
