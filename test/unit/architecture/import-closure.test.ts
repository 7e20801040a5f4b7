import { join } from 'node:path';
import { importGraph } from '../../harness/import-graph';

const root = join(__dirname, '../../..');

/**
 * The files of a pass's bundle: functions/distributor.ts and what it imports, transitively (type
 * imports included: a reader follows them too). Issue 35 aims at 50: 100 before the folds of one
 * concept split over several files (docs/DESIGN.md "Files: one per concept"), 50 after. It may
 * shrink, not grow.
 */
const CEILING = 50;

function closure(graph: ReadonlyMap<string, readonly string[]>, start: string): Set<string> {
  const seen = new Set<string>();
  const next = [start];
  for (let file = next.pop(); file !== undefined; file = next.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    next.push(...(graph.get(file) ?? []));
  }
  return seen;
}

describe("a pass's import closure (functions/distributor.ts)", () => {
  const graph = new Map([...importGraph(root, 'lib'), ...importGraph(root, 'functions')]);
  const files = closure(graph, 'functions/distributor.ts');

  it('holds no cleanup file', () => {
    expect([...files].filter((file) => file.startsWith('lib/cleanup/'))).toEqual([]);
  });

  it(`holds at most ${CEILING} files`, () => {
    expect(files.size).toBeLessThanOrEqual(CEILING);
  });

  it('follows imports transitively, each file once', () => {
    const fixture = new Map([
      ['a.ts', ['b.ts', 'c.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
    ]);
    expect([...closure(fixture, 'a.ts')].sort()).toEqual(['a.ts', 'b.ts', 'c.ts', 'd.ts']);
  });
});
