import { runCli } from '../../../local/cli/cli';

/** The CLI's exit code and what it wrote to stderr, for arguments refused before any service is used. */
async function fairway(...argv: string[]) {
  let stderr = '';
  const code = await runCli(argv, {}, { out: () => undefined, err: (t) => (stderr += t) });
  return { code, stderr };
}

// Issue 38, item 7: `invoke rooter` said "invoke needs a function name" instead of suggesting one.
describe('a misspelled name gets the nearest one, as a misspelled variable does', () => {
  it('invoke rooter: did you mean router?', async () => {
    const { code, stderr } = await fairway('invoke', 'rooter');
    expect(code).toBe(2);
    expect(stderr).toContain('unknown function "rooter" (did you mean router?)');
  });

  it('invoke repositoryCleanups: did you mean repositoryCleanup?', async () => {
    expect((await fairway('invoke', 'repositoryCleanups')).stderr).toContain('(did you mean repositoryCleanup?)');
  });

  it('a command: tenant, did you mean tenants?', async () => {
    const { code, stderr } = await fairway('tenant');
    expect(code).toBe(2);
    expect(stderr).toContain('unknown command "tenant" (did you mean tenants?)');
  });

  it('nothing near: no guess', async () => {
    const { stderr } = await fairway('invoke', 'xyz');
    expect(stderr).toContain('unknown function "xyz"; functions are router,');
    expect(stderr).not.toContain('did you mean');
  });

  it('no name at all: the list', async () => {
    expect((await fairway('invoke')).stderr).toContain('invoke needs a function name, one of: router,');
  });
});
