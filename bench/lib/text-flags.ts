/** Parsing of text flags (Benchmark.textFlags): a bad value is an error naming the flag and what was wrong. */

/** A JSON object of string settings; anything else is an error naming the flag. */
export function parseEnvFlag(name: string, text: string | undefined): Record<string, string> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`--${name}: not JSON (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`--${name}: must be a JSON object of settings, got ${text}`);
  for (const [key, setting] of Object.entries(value))
    if (typeof setting !== 'string')
      throw new Error(`--${name}: ${key} must be a string, got ${JSON.stringify(setting)}`);
  return value as Record<string, string>;
}

/** A comma-separated subset of `known`, each at most once, in the order given; all of them when absent. */
export function parseListFlag<T extends string>(name: string, text: string | undefined, known: readonly T[]): T[] {
  if (text === undefined) return [...known];
  const items = text.split(',').map((s) => s.trim());
  const problems = [
    ...items.filter((item) => !known.includes(item as T)).map((item) => `unknown "${item}"`),
    ...items.filter((item, i) => items.indexOf(item) !== i).map((item) => `"${item}" given twice`),
  ];
  if (problems.length > 0) throw new Error(`--${name}: ${problems.join(', ')}; known: ${known.join(', ')}`);
  return items as T[];
}
