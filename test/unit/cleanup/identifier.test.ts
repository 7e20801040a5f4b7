import { identifier, quoteAll, quoteIdentifier } from '../../../lib/cleanup/postgres/identifier';

// Table and column names reach SQL text (they cannot be bind parameters): only plain names pass.
describe('SQL names at their limits', () => {
  const part63 = `a${'b'.repeat(62)}`;

  it.each([
    ['a part of 63 characters, PostgreSQL’s limit', part63, `"${part63}"`],
    ['a schema and a table of 63 characters each', `${part63}.${part63}`, `"${part63}"."${part63}"`],
    ['a name starting with _', '_x', '"_x"'],
    ['a one-letter name', 'x', '"x"'],
  ])('quotes %s', (_, name, quoted) => {
    expect(quoteIdentifier(name)).toBe(quoted);
    expect(identifier().safeParse(name).success).toBe(true);
  });

  it.each([
    ['a part of 64 characters', `${part63}c`],
    ['a table of 64 characters after a schema', `s.${part63}c`],
    ['a table starting with a digit after a schema', 's.2x'],
    ['an empty table after a schema', 's.'],
    ['an empty schema', '.t'],
    ['a name starting with $', '$x'],
    ['a quote at the end', 'x"'],
    ['a trailing newline', 'x\n'],
  ])('refuses %s', (_, name) => {
    expect(() => quoteIdentifier(name)).toThrow(`Not a valid SQL name: ${JSON.stringify(name)}`);
    expect(
      identifier()
        .safeParse(name)
        .error?.issues.map((i) => i.message),
    ).toEqual(['must be a table or column name (letters, digits, _; optionally schema.name)']);
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

  it('quotes every name of a names object', () => {
    expect(quoteAll({ table: 'nxrg.documents', id: 'id' })).toEqual({ table: '"nxrg"."documents"', id: '"id"' });
  });
});
