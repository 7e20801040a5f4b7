import { createTestSchema, type TestSchema } from '../../test/harness/postgres';
import { createTestVhost, type TestVhost } from '../../test/harness/rabbit';
import { onRabbitmq4, services } from '../../test/harness/services';

/**
 * Benchmarks reach the same services as the integration tests (TEST_* variables, or the
 * development machine's defaults) and isolate themselves the same way: a vhost or schema of
 * their own, removed at the end, named after the bench.
 */
export { onRabbitmq4, services };

export type BenchVhost = TestVhost;
export type BenchSchema = TestSchema;

export function benchName(bench: string): string {
  return `fairway_bench_${bench}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
}

export const createBenchVhost = (bench: string): Promise<BenchVhost> => createTestVhost(benchName(bench));

export const createBenchSchema = (bench: string): Promise<BenchSchema> => createTestSchema(benchName(bench), 8);
