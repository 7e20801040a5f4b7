import { z } from 'zod';
import { FairwayError } from '../../platform/errors';

/** A table or column name, optionally schema-qualified (`schema.table`); nothing else reaches SQL text. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_$]{0,62}(\.[A-Za-z_][A-Za-z0-9_$]{0,62})?$/;

export const identifier = () =>
  z
    .string()
    .regex(IDENTIFIER, { error: 'must be a table or column name (letters, digits, _; optionally schema.name)' });

/** Quotes a validated name for SQL text: `schema.table` becomes `"schema"."table"`. */
export function quoteIdentifier(name: string): string {
  if (!IDENTIFIER.test(name)) throw new FairwayError(`Not a valid SQL name: ${JSON.stringify(name)}`);
  return name
    .split('.')
    .map((part) => `"${part}"`)
    .join('.');
}

/** Quotes every value of a names object, for building statements. */
export function quoteAll<T extends Record<string, string>>(names: T): { [K in keyof T]: string } {
  return Object.fromEntries(Object.entries(names).map(([k, v]) => [k, quoteIdentifier(v)])) as {
    [K in keyof T]: string;
  };
}
