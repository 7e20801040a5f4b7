import { benchmarks } from '../../../bench/benchmarks';
import { tinyFlags } from '../../../bench/lib/benchmark';

/**
 * Every benchmark runs end to end with tiny sizes against the real services and reports its
 * tables. Figures are not asserted (speed is for `npm run bench`, never for a test); that each
 * table is complete and every figure a real number is.
 */
describe('benchmarks, tiny sizes', () => {
  it.each(benchmarks.map((bench) => [bench.name, bench] as const))(
    '%s runs and reports its tables',
    async (_name, bench) => {
      const progress: string[] = [];
      const tables = await bench.run(tinyFlags(bench), (line) => progress.push(line));
      expect(tables.length).toBeGreaterThan(0);
      for (const table of tables) {
        expect(table.rows.length).toBeGreaterThan(0);
        const columns = Object.keys(table.rows[0]!);
        for (const row of table.rows) {
          expect(Object.keys(row)).toEqual(columns);
          for (const value of Object.values(row))
            if (typeof value === 'number') expect(Number.isFinite(value)).toBe(true);
        }
      }
    },
    // The flood bench runs its twelve deliveries even at tiny sizes.
    180_000,
  );

  it('names are unique and every flag has a quick and a tiny size', () => {
    expect(new Set(benchmarks.map((b) => b.name)).size).toBe(benchmarks.length);
    for (const bench of benchmarks) {
      for (const spec of Object.values(bench.flags)) expect(spec.tiny).toBeLessThanOrEqual(spec.quick);
    }
  });
});
