import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The modules whose zod schemas read environment variables, relative to `root`: every file of a
 * `config/` folder of lib/, every lib/ file named `config.ts`, and the shared `lib/settings/`. Found
 * by name, so that a part's own settings module is checked wherever the part keeps it.
 */
export function configModuleFiles(root: string): string[] {
  const isConfig = (file: string) => /^lib\/(?:(?:.*\/)?config(?:\/[^/]+)?|settings\/[^/]+)\.ts$/.test(file);
  return sources(join(root, 'lib'))
    .map((path) => relative(root, path).split('\\').join('/'))
    .filter(isConfig)
    .sort();
}

/** Each config module's exports, by its path relative to `root`. */
export async function loadConfigModules(root: string): Promise<Record<string, Record<string, unknown>>> {
  const modules: Record<string, Record<string, unknown>> = {};
  for (const file of configModuleFiles(root)) modules[file] = await import(join(root, file));
  return modules;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}
