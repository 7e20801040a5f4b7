import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The repository root (where serverless.yml is), found from this file wherever it was bundled to. */
export function projectRoot(from = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'serverless.yml'))) return dir;
    if (dirname(dir) === dir) return process.cwd();
  }
}
