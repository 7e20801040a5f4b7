/** Unit tests (test/unit) and integration tests against real services (test/integration) run together. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.(t|j|mj)sx?$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  // middy 5+ is ESM-only; load it through swc as CommonJS (TOOLING.md).
  moduleNameMapper: { '^@middy/([^/]+)$': '<rootDir>/node_modules/@middy/$1/index.js' },
  transformIgnorePatterns: ['/node_modules/(?!@middy/)'],
  testTimeout: 60_000,
  // Every service must answer before any test runs; a missing one fails the run, naming it.
  globalSetup: '<rootDir>/test/harness/global-setup.ts',
  // A test file whose setup failed halfway can leave a server open; CI must end all the same.
  forceExit: true,
  // One test file at a time: the router's broker-restart test stops the machine-wide RabbitMQ for
  // a few seconds, which would fail whatever ran beside it. (2-core machines get one worker anyway.)
  maxWorkers: 1,
};
