// Mutation testing of the pure cores against the unit tests: `npm run test:mutation` (docs/testing.md).
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate: [
    'lib/priority/rules.ts',
    'lib/queues/staging-names.ts',
    'lib/routing/event.ts',
    'lib/routing/task-message.ts',
    'lib/distributor/planner.ts',
    'lib/distributor/capacity.ts',
    'lib/distributor/weights.ts',
    'lib/cleanup/engine/codec.ts',
    'lib/cleanup/engine/keys.ts',
    // The one pure part of the jobs' SQL: the statements themselves are built inside the adapters' methods.
    'lib/postgres/identifier.ts',
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
