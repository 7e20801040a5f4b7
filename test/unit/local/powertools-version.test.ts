import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '../../..');
const read = (file: string) => JSON.parse(readFileSync(join(root, file), 'utf8'));

// Issue 27 item 5: two Powertools versions meant two copies of its commons in every bundle (and two
// cold-start checks of its environment). One version across the packages keeps one copy.
describe('Powertools for AWS Lambda', () => {
  it('every @aws-lambda-powertools package in package.json has the same version', () => {
    const deps: Record<string, string> = read('package.json').dependencies;
    const versions = Object.entries(deps).filter(([name]) => name.startsWith('@aws-lambda-powertools/'));
    expect(versions.length).toBeGreaterThanOrEqual(3);
    expect(new Set(versions.map(([, version]) => version)).size).toBe(1);
  });

  it('the lock installs one copy of each, commons included', () => {
    const packages: Record<string, { version: string }> = read('package-lock.json').packages;
    const copies = Object.entries(packages)
      .filter(([path]) => /node_modules\/@aws-lambda-powertools\/[^/]+$/.test(path))
      .map(([path, { version }]) => [path.replace(/^.*node_modules\//, ''), path, version] as const);
    const commons = copies.filter(([name]) => name === '@aws-lambda-powertools/commons');
    expect(commons.map(([, path]) => path)).toEqual(['node_modules/@aws-lambda-powertools/commons']);
    expect(new Set(copies.map(([, , version]) => version)).size).toBe(1);
  });
});
