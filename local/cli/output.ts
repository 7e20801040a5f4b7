/** A table for people: rows of the same keys, printed with aligned columns under an optional title. */
export interface Table {
  title?: string;
  rows: Record<string, unknown>[];
  /** What to print instead of an empty table ('' for nothing: a title alone). */
  empty?: string;
}

export function renderTables(tables: readonly Table[]): string {
  return tables.map(renderTable).join('\n\n');
}

function renderTable({ title, rows, empty = '(none)' }: Table): string {
  const lines = title ? [title] : [];
  if (rows.length === 0) return [...lines, ...(empty ? [`  ${empty}`] : [])].join('\n');
  const headers = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const cells = rows.map((row) => headers.map((h) => cell(row[h])));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const numeric = headers.map((h) => rows.every((row) => row[h] === undefined || typeof row[h] === 'number'));
  const line = (values: string[]) =>
    values
      .map((v, i) => (numeric[i] ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [...lines, line(headers), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
