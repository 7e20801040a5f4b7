/** One shape for every test file; the projects below differ only in where they look and what they need. */
const common = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.(t|j|mj)sx?$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  // middy 5+ and fauxqs are ESM-only; load them through swc as CommonJS.
  moduleNameMapper: {
    '^@middy/([^/]+)$': '<rootDir>/node_modules/@middy/$1/index.js',
    '^fauxqs$': '<rootDir>/node_modules/fauxqs/dist/app.js',
  },
  transformIgnorePatterns: ['/node_modules/(?!@middy/|fauxqs/)'],
  // StrykerJS copies the project into .stryker-tmp while it runs (npm run test:mutation).
  modulePathIgnorePatterns: ['<rootDir>/.stryker-tmp'],
};

/**
 * The integration suites `integration-rabbitmq4` runs again on the RabbitMQ 4.0 node of
 * `.ci/services.sh` (issue 36): the ones whose outcome the broker decides (declares and their
 * refusals, policies, priorities, publishes and confirms, moves, depths, deletes, the bench workers'
 * acks on a quorum queue before a close). Not the ones about
 * Fairway's own handling of a broker that fails (black holes, lost connections, killed passes), about
 * DynamoDB or Lambda, nor the broker-restart test (it restarts the TLS node): they would add minutes
 * and test nothing of 4.0's. routing/direct-routing runs here since the router decides direct
 * routing after its priority checks and declares: decided before them, a slow batch found its grant
 * read past the read window at its publish and staged the whole burst (the 4.0.5 failure of (d)).
 */
const rabbitmq4Suites = [
  'rabbitmq/adapters',
  'rabbitmq/confirms',
  'rabbitmq/management-paths',
  'routing/router',
  'routing/staging-arguments',
  'routing/staging-priorities',
  'routing/broker-policies',
  'routing/broker-refusals',
  'routing/poison-records',
  'routing/direct-routing',
  'distributor/pass',
  'distributor/quiet-first',
  'distributor/target-limits',
  'distributor/target-deleted',
  'distributor/moving/mover',
  'distributor/moving/mover-acks',
  'distributor/moving/mover-returned',
  'distributor/moving/depth-reads',
  'distributor/moving/parking',
  'distributor/reaping/reaper',
  'distributor/target-buffer',
  'staging/doorbell',
  'bench/rate-workers',
];

/**
 * `unit`: pure rules, no service and no network (`npm run test:unit` runs only these).
 * `packaging`: the generated CloudFormation template, offline.
 * `integration`: real RabbitMQ, PostgreSQL and embedded DynamoDB; every service must answer before any
 * test runs, or the run stops naming the missing one (tests never skip).
 * `integration-rabbitmq4`: the broker-facing integration suites again, on RabbitMQ 4.0.
 */
module.exports = {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    { ...common, displayName: 'packaging', testMatch: ['<rootDir>/test/packaging/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/harness/global-setup.ts',
    },
    {
      ...common,
      displayName: 'integration-rabbitmq4',
      testMatch: rabbitmq4Suites.map((suite) => `<rootDir>/test/integration/${suite}.test.ts`),
      setupFiles: ['<rootDir>/test/harness/on-rabbitmq4.ts'],
      globalSetup: '<rootDir>/test/harness/global-setup.ts',
    },
  ],
  testTimeout: 60_000,
  // Jest's order (slowest first, by the last run's timings), with the known slow files first on a fresh clone.
  testSequencer: '<rootDir>/test/harness/sequencer.js',
  // A test file whose setup failed halfway can leave a server open; CI must end all the same.
  forceExit: true,
  // Three test files at a time, whatever the core count: most of a file's time is spent waiting on
  // the services, not computing. Files share no broker state (each has its own vhost, schema and
  // dynalite); the files that use the tests' own RabbitMQ node hold it (test/harness/own-node-holds.ts),
  // the one that restarts it alone. `--maxWorkers=1` runs them one at a time.
  maxWorkers: 3,
};
