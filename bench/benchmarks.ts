import { cleanupBench } from './cleanup';
import { discoveryBench } from './discovery';
import { distributorBench } from './distributor';
import { fairnessBench } from './fairness';
import { fleetBench } from './fleet';
import { floodBench } from './flood';
import { latencyBench } from './latency';
import type { Benchmark } from './lib/benchmark';
import { routerBench } from './router';
import { scaleBench } from './scale';

/** Every benchmark, in the order `npm run bench` runs them. */
// biome-ignore lint/suspicious/noExplicitAny: each bench has its own flag names.
export const benchmarks: Benchmark<any>[] = [
  routerBench,
  distributorBench,
  scaleBench,
  fairnessBench,
  discoveryBench,
  cleanupBench,
  latencyBench,
  floodBench,
  fleetBench,
];
