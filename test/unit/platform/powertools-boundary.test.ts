import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(__dirname, '../../..');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/**
 * Logging and metrics reach lib/ only through injected reports: a part's service file builds them
 * (lib/wiring/<part>.ts) from the one Powertools adapter, which the one Lambda wiring
 * (lib/wiring/lambda-function.ts) holds and hands to them. No file below wiring/ imports wiring/ (the layers test).
 */
describe('the Powertools boundary', () => {
  const allowed = (file: string) => /^lib\/wiring\/[^/]+\.ts$/.test(file);

  it('no lib/ file outside wiring/ imports the Powertools logger or metrics', () => {
    const offenders = sources(join(root, 'lib'))
      .map((path) => relative(root, path).split('\\').join('/'))
      .filter((file) => !allowed(file))
      .filter((file) =>
        /from '@aws-lambda-powertools\/(logger|metrics)[^']*'/.test(readFileSync(join(root, file), 'utf8')),
      );
    expect(offenders).toEqual([]);
  });

  it('the rule matches a service file and refuses any other', () => {
    expect(['lib/wiring/router.ts', 'lib/wiring/lambda-function.ts'].every(allowed)).toBe(true);
    expect(['lib/routing/router.ts', 'lib/cleanup/engine/service.ts', 'lib/distributor/report.ts'].some(allowed)).toBe(
      false,
    );
  });
});
