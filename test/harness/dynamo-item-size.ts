/**
 * The size DynamoDB bills and limits an item by (its documented rules, rounded up): attribute
 * names and values in UTF-8; a number about one byte per two significant digits plus one; a map
 * or list 3 bytes plus one per element. For an item as the document client returns it.
 */
export function dynamoItemBytes(item: Record<string, unknown>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) bytes += Buffer.byteLength(name) + valueBytes(value);
  return bytes;
}

function valueBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number') return Math.ceil(String(Math.abs(value)).replace(/[.e+-]/g, '').length / 2) + 1;
  if (typeof value === 'boolean' || value === null || value === undefined) return 1;
  if (Array.isArray(value)) return 3 + value.reduce<number>((sum, v) => sum + 1 + valueBytes(v), 0);
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return [...value].reduce<number>((sum, v) => sum + valueBytes(v), 0);
  if (typeof value === 'object')
    return 3 + dynamoItemBytes(value as Record<string, unknown>) + Object.keys(value).length;
  return 0;
}
