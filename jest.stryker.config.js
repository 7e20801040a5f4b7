/**
 * The unit tests of the pure cores, as one flat project, for StrykerJS (stryker.config.mjs): its jest
 * runner measures coverage per test, which it cannot do through the `projects` of jest.config.js.
 * Only the folders that test a mutated core: a static mutant (module-level code) reruns all of them.
 */
const { projects } = require('./jest.config');

const { displayName: _displayName, ...unit } = projects.find((project) => project.displayName === 'unit');

module.exports = {
  ...unit,
  testMatch: ['priority', 'queues', 'rabbitmq', 'routing', 'distributor', 'cleanup', 'postgres'].map(
    (folder) => `<rootDir>/test/unit/${folder}/**/*.test.ts`,
  ),
};
