import { cleanupBench } from './cleanup';
import type { Benchmark } from './lib/benchmark';
import { routerBench } from './router';

/** Every benchmark, in the order `npm run bench` runs them. */
export const benchmarks: Benchmark<any>[] = [routerBench, cleanupBench];
