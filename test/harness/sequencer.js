const Sequencer = require('@jest/test-sequencer').default;

/**
 * The files that take minutes, slowest first (an idle 2-core machine, one file at a time: the
 * benches at tiny sizes ~3 min, the others 1–2 min). Jest starts the slowest files first from the
 * timings of the last run on this machine; a fresh clone has none, and jest would start these by
 * file size, late, leaving one running alone at the end while the other workers idle.
 */
const slowFiles = [
  'test/integration/bench/benchmarks.test.ts',
  'test/integration/cleanup/jobs/to-empty.test.ts',
  'test/integration/cleanup/engine/crash.test.ts',
  'test/integration/cleanup/engine/concurrency.test.ts',
  'test/integration/local/start.test.ts',
  'test/integration/distributor/crash.test.ts',
];

/** Jest's own order, except that the files above go first when this machine has no timing for them yet. */
class SlowFirst extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    const rank = (test) => (test.duration == null ? slowFiles.findIndex((file) => test.path.endsWith(file)) : -1);
    const unknownSlow = sorted.filter((test) => rank(test) >= 0).sort((a, b) => rank(a) - rank(b));
    return [...unknownSlow, ...sorted.filter((test) => rank(test) < 0)];
  }
}

module.exports = SlowFirst;
