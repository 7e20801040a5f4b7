/**
 * A cleanup function checks its configuration at cold start without building anything: no
 * database pool or DynamoDB client is made only to be thrown away (lib/wiring/cleanup.ts).
 */
const mockBuilt = { pools: 0, clients: 0 };

jest.mock('pg', () => {
  const actual = jest.requireActual('pg');
  return {
    ...actual,
    Pool: class extends actual.Pool {
      constructor(...args: unknown[]) {
        super(...args);
        mockBuilt.pools++;
      }
    },
  };
});

jest.mock('../../../lib/platform/aws', () => {
  const actual = jest.requireActual('../../../lib/platform/aws');
  return {
    ...actual,
    documentClient: (...args: unknown[]) => {
      mockBuilt.clients++;
      return actual.documentClient(...args);
    },
  };
});

const SECRET = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:nxrg';
const base = {
  CLEANUP_TABLE: 'CleanupStackTable',
  NXRG_DATABASE_URL: 'postgres://nxrg.invalid/db',
  OPENXDS_DATABASE_URL: 'postgres://openxds.invalid/db',
};

describe('cleanup function cold start', () => {
  const saved = process.env;
  beforeEach(() => {
    mockBuilt.pools = 0;
    mockBuilt.clients = 0;
  });
  afterEach(() => {
    process.env = saved;
  });

  /** Loads functions/registryStatus90Cleanup as Lambda does; returns what it threw and what it built. */
  function coldStart(env: Record<string, string>) {
    process.env = { ...saved, ...base, ...env };
    let error: Error | undefined;
    jest.isolateModules(() => {
      try {
        require('../../../functions/registryStatus90Cleanup');
      } catch (caught) {
        error = caught as Error;
      }
    });
    return { error, ...mockBuilt };
  }

  it('without database secrets, builds its service once: two pools and one DynamoDB client', () => {
    expect(coldStart({})).toEqual({ error: undefined, pools: 2, clients: 1 });
  });

  it('with database secrets, checks the settings and builds nothing until the credentials are read', () => {
    expect(coldStart({ NXRG_DATABASE_SECRET_ARN: SECRET })).toEqual({ error: undefined, pools: 0, clients: 0 });
  });

  it.each([
    ['without', {}],
    ['with', { NXRG_DATABASE_SECRET_ARN: SECRET }],
  ])('%s secrets, refuses a bad job setting at cold start, before building a pool or client', (_, secrets) => {
    const { error, pools, clients } = coldStart({ ...secrets, NXRG_NAMES: '{"documents":{"tabel":"docs"}}' });
    expect(error?.name).toBe('ConfigError');
    expect(error?.message).toContain('NXRG_NAMES.documents.tabel: is not a known key');
    expect({ pools, clients }).toEqual({ pools: 0, clients: 0 });
  });

  it('refuses a bad engine setting at cold start, before building a pool or client', () => {
    const { error, pools, clients } = coldStart({ CLEANUP_FUNCTION_TIMEOUT_SECONDS: '5' });
    expect(error?.name).toBe('ConfigError');
    expect(error?.message).toContain('CLEANUP_FUNCTION_TIMEOUT_SECONDS: must be at least 10');
    expect({ pools, clients }).toEqual({ pools: 0, clients: 0 });
  });
});
