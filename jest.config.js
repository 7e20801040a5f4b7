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
 * The broker-facing suites `integration-rabbitmq4` runs again on the RabbitMQ 4.0 node of
 * `.ci/services.sh` (issue 36): what declares, moves, reaps and counts queues. The rest talk to the
 * broker only in passing (CLI, cleanup, config) or not at all (queues/: DynamoDB) and stay on 3.10.
 */
const rabbitmq4Suites = ['rabbitmq', 'routing', 'distributor'];
/** Of those, the files that never reach the broker (DynamoDB stores, a fake management server), and
 * the one that restarts the TLS node, which is 3.10. */
const rabbitmq4Skipped = [
  'routing/broker-restart',
  'routing/tenant-counters',
  'routing/tenant-counter-memory',
  'rabbitmq/management-black-hole',
  'distributor/stores/.*',
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
      testMatch: rabbitmq4Suites.map((suite) => `<rootDir>/test/integration/${suite}/**/*.test.ts`),
      testPathIgnorePatterns: rabbitmq4Skipped.map((file) => `/test/integration/${file}\\.test\\.ts$`),
      setupFiles: ['<rootDir>/test/harness/on-rabbitmq4.ts'],
      globalSetup: '<rootDir>/test/harness/global-setup.ts',
    },
  ],
  testTimeout: 60_000,
  // A test file whose setup failed halfway can leave a server open; CI must end all the same.
  forceExit: true,
  // One test file at a time: several tests count every queue or connection of a vhost or node, and
  // the broker-restart test restarts the tests' own RabbitMQ node. (2-core machines get one worker anyway.)
  maxWorkers: 1,
};
