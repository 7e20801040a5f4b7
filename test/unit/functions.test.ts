// The handlers read their configuration when their module loads (cold start), before any event.
const functions = {
  router: ['TENANT_TABLE', 'AMQP_URL'],
  distributor: ['DISTRIBUTOR_TABLE', 'RABBITMQ_MANAGEMENT_URL'],
  registryTimebasedCleanup: ['CLEANUP_TABLE', 'NXRG_DATABASE_URL'],
  registryStatus90Cleanup: ['CLEANUP_TABLE', 'OPENXDS_DATABASE_URL'],
  repositoryCleanup: ['CLEANUP_TABLE', 'NXRG_DATABASE_URL'],
} as const;

describe.each(Object.entries(functions))('functions/%s', (name, variables) => {
  const saved = process.env;
  afterEach(() => {
    process.env = saved;
  });

  it('fails at cold start naming each missing variable', () => {
    process.env = { ...saved, ...Object.fromEntries(variables.map((v) => [v, ''])) };
    jest.isolateModules(() => {
      let error: unknown;
      try {
        require(`../../functions/${name}`);
      } catch (caught) {
        error = caught;
      }
      expect((error as Error).name).toBe('ConfigError');
      for (const variable of variables) expect((error as Error).message).toContain(`${variable}: is required`);
    });
  });
});
