// Mutation testing of the pure cores against the unit tests: `npm run test:mutation` (docs/testing.md).
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate: [
    'lib/routing/priority/rules.ts',
    'lib/staging/staging-names.ts',
    'lib/routing/event.ts',
    'lib/routing/message-properties.ts',
    'lib/rabbitmq/publish-refusals.ts',
    'lib/rabbitmq/queue-policies.ts',
    'lib/routing/task-message.ts',
    'lib/distributor/planning/planner.ts',
    'lib/distributor/planning/capacity.ts',
    'lib/distributor/planning/weights.ts',
    'lib/cleanup/engine/codec.ts',
    'lib/cleanup/engine/keys.ts',
    // The one pure part of the jobs' SQL: the statements themselves are built inside the adapters' methods.
    'lib/cleanup/postgres/identifier.ts',
  ],
  testRunner: 'jest',
  jest: { projectType: 'custom', configFile: 'jest.stryker.config.js' },
  coverageAnalysis: 'perTest',
  concurrency: 2,
  timeoutMS: 15000,
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  reporters: ['clear-text', 'progress', 'html'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  thresholds: { high: 90, low: 80, break: null },
  ignorePatterns: ['.serverless', '.esbuild', 'coverage', 'reports'],
};
