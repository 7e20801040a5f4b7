import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { importCycles, importGraph } from '../../harness/import-graph';

const root = join(__dirname, '../../..');
const design = readFileSync(join(root, 'docs/DESIGN.md'), 'utf8');

/** The layer table of docs/DESIGN.md: each row's number and the `folder/` names it lists. */
function layersFromDesign(text: string): Map<string, number> {
  const layers = new Map<string, number>();
  for (const [, rank = '', cells = ''] of text.matchAll(/^\| (\d) +\| ([^|]+) \|/gm))
    for (const [, folder = ''] of cells.matchAll(/`([a-z-]+)(?:\/|\.ts)`/g)) layers.set(folder, Number(rank));
  return layers;
}

const PARTS = ['routing', 'distributor', 'cleanup'];

interface Module {
  folder: string;
  rank: number;
  part?: string;
}

function moduleOf(file: string, layers: ReadonlyMap<string, number>): Module {
  const [, folder] = /^lib\/([^/.]+)(?:\.ts|\/.*)$/.exec(file) ?? [];
  const rank = layers.get(folder ?? '');
  if (folder === undefined || rank === undefined)
    throw new Error(`${file}: lib/${folder} has no layer; add it to the table in docs/DESIGN.md`);
  return { folder, rank, part: PARTS.includes(folder) ? folder : undefined };
}

/** Each import of `graph` that runs upward, sideways into another folder of the same layer, or between parts. */
function layerViolations(graph: ReadonlyMap<string, readonly string[]>, layers: ReadonlyMap<string, number>): string[] {
  const violations: string[] = [];
  for (const [file, imports] of graph) {
    const from = moduleOf(file, layers);
    for (const target of imports) {
      if (!target.startsWith('lib/')) continue;
      const to = moduleOf(target, layers);
      const crossesParts = from.part !== undefined && to.part !== undefined && from.part !== to.part;
      if (from.folder === to.folder || (to.rank < from.rank && !crossesParts)) continue;
      violations.push(`${file} -> ${target}`);
    }
  }
  return violations.sort();
}

describe('the layers of lib/ (docs/DESIGN.md)', () => {
  const layers = layersFromDesign(design);
  const graph = importGraph(root, 'lib');

  it('docs/DESIGN.md gives every folder of lib/ a layer', () => {
    expect(layers.get('platform')).toBe(0);
    for (const file of graph.keys()) expect(() => moduleOf(file, layers)).not.toThrow();
  });

  it('no import runs upward, sideways or between parts', () => {
    const violations = layerViolations(graph, layers);
    expect(violations).toEqual([]);
  });

  it('no import cycle, in lib/ or in local/ (npm start and the CLI)', () => {
    const cycles = [graph, importGraph(root, 'local')].flatMap((g) =>
      importCycles(g).map((cycle) => cycle.join(' <-> ')),
    );
    expect(cycles).toEqual([]);
  });

  it('the checks catch an upward import, a sideways one, one between parts and a cycle', () => {
    const fixture = new Map<string, string[]>([
      ['lib/platform/errors.ts', []],
      ['lib/rabbitmq/a.ts', ['lib/settings/common.ts']],
      ['lib/settings/common.ts', ['lib/platform/errors.ts']],
      ['lib/staging/b.ts', ['lib/work-board/a.ts']],
      ['lib/work-board/a.ts', ['lib/rabbitmq/a.ts']],
      ['lib/routing/router.ts', ['lib/distributor/pass.ts', 'lib/staging/names.ts']],
      ['lib/wiring/router.ts', ['lib/routing/router.ts', 'lib/cleanup/x.ts']],
      ['lib/distributor/pass.ts', []],
      ['lib/cleanup/x.ts', ['lib/cleanup/y.ts']],
      ['lib/cleanup/y.ts', ['lib/cleanup/x.ts']],
      ['lib/staging/names.ts', []],
    ]);
    expect(layerViolations(fixture, layers)).toEqual([
      'lib/rabbitmq/a.ts -> lib/settings/common.ts',
      'lib/routing/router.ts -> lib/distributor/pass.ts',
      'lib/staging/b.ts -> lib/work-board/a.ts',
    ]);
    expect(importCycles(fixture)).toEqual([['lib/cleanup/x.ts', 'lib/cleanup/y.ts']]);
  });
});

describe('the distributor in layers (docs/distributor.md "Layers")', () => {
  /** The orchestrator (the pass and one target's part of it) and the composition root. */
  const above = ['lib/distributor/pass.ts', 'lib/distributor/target-pass.ts', 'lib/wiring/distributor.ts'];
  const below = (file: string) => /^lib\/distributor\/(planning|moving|stores)\//.test(file);
  const upward = (graph: ReadonlyMap<string, readonly string[]>) =>
    [...graph]
      .filter(([file]) => below(file))
      .flatMap(([file, imports]) => imports.filter((target) => above.includes(target)).map((t) => `${file} -> ${t}`));

  it('planning/, moving/ and stores/ never import the pass orchestrator or the wiring', () => {
    expect(upward(importGraph(root, 'lib'))).toEqual([]);
  });

  it('the check catches such an import', () => {
    const fixture = new Map<string, string[]>([
      ['lib/distributor/planning/x.ts', ['lib/distributor/pass.ts', 'lib/distributor/report.ts']],
      ['lib/distributor/moving/y.ts', ['lib/distributor/moving/z.ts']],
      ['lib/distributor/stores/w.ts', ['lib/wiring/distributor.ts']],
      ['lib/distributor/pass.ts', ['lib/distributor/planning/x.ts']],
    ]);
    expect(upward(fixture)).toEqual([
      'lib/distributor/planning/x.ts -> lib/distributor/pass.ts',
      'lib/distributor/stores/w.ts -> lib/wiring/distributor.ts',
    ]);
  });
});

describe('environment-variable names stay at the roots', () => {
  /** Each part's config.ts (cleanup's jobs have one of their own), the shared settings, the wiring. */
  const atRoot = (file: string) =>
    /^lib\/(wiring\/[^/]+|settings\/[^/]+|[^/]+\/config|cleanup\/jobs\/config)\.ts$/.test(file);

  it("no lib/ file below the settings and the wiring names a 'DISTRIBUTOR_…', 'ROUTER_…' or 'CLEANUP_…' variable", () => {
    const offenders = [...importGraph(root, 'lib').keys()]
      .filter((file) => !atRoot(file))
      .filter((file) => /'(DISTRIBUTOR|ROUTER|CLEANUP)_[A-Z_]+'/.test(readFileSync(join(root, file), 'utf8')))
      .sort();
    expect(offenders).toEqual([]);
  });
});

describe('file length', () => {
  const named = [...design.matchAll(/^- `(lib\/[^`]+\.ts)`/gm)].map(([, file]) => file);

  it('no lib/ file over 300 lines unless docs/DESIGN.md names it (with why)', () => {
    const long = [...importGraph(root, 'lib').keys()].filter(
      (file) => readFileSync(join(root, file), 'utf8').split('\n').length > 301,
    );
    expect(long.filter((file) => !named.includes(file)).sort()).toEqual([]);
  });
});
