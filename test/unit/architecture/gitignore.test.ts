import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '../../..');

// Issue 38, item 7: .gitignore listed lib/platform/errors.ts and lib/platform/network-bounds.ts, both tracked, so a
// new file beside them or a rename would silently drop out of the repository.
describe('.gitignore', () => {
  it('ignores no tracked file', () => {
    const ignored = execFileSync('git', ['ls-files', '--cached', '--ignored', '--exclude-standard'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(ignored.split('\n').filter(Boolean)).toEqual([]);
  });
});
