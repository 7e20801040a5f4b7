import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = join(__dirname, '../../..');

/**
 * Issue 38, item 7: the bundled CLI printed `_DatabaseError` (esbuild renamed the class apart from
 * pg's own DatabaseError). `npx fairway` runs bin/fairway, which builds the bundle when it is stale.
 */
describe('the bundled CLI names its errors as the code does', () => {
  it('a setup against a closed database port prints DatabaseError', async () => {
    const run = promisify(execFile)(process.execPath, [join(root, 'bin/fairway'), 'setup'], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        // Port 1: nothing listens, so the connection is refused at once.
        NXRG_DATABASE_URL: 'postgres://fairway:fairway@127.0.0.1:1/nxrg',
      },
    });
    const { stderr } = await run.then(
      () => ({ stderr: 'setup succeeded' }),
      (error: { stderr: string }) => error,
    );
    expect(stderr).toContain('fairway setup: DatabaseError: NXRG database (NXRG_DATABASE_URL)');
  }, 120_000);
});
