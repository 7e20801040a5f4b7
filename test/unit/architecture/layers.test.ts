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
const ROOT_RANK = 6;

interface Module {
  folder: string;
  rank: number;
  part?: string;
}

function moduleOf(file: string, layers: ReadonlyMap<string, number>): Module {
  const [, folder, rest] = /^lib\/([^/.]+)(?:\.ts|\/(.*))$/.exec(file) ?? [];
  if (folder !== undefined && PARTS.includes(folder) && rest === 'service.ts')
    return { folder: `${folder}/service`, rank: ROOT_RANK, part: folder };
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

/**
 * Imports the re-room (issue 28) has still to remove. Never add one: a test failing here means an
 * import runs against docs/DESIGN.md's layer order. An entry that no longer occurs fails too, so
 * the list only shrinks.
 */
const KNOWN_VIOLATIONS: string[] = [
  'lib/config/distributor.ts -> lib/distributor/weights.ts',
  'lib/routing/router.ts -> lib/distributor/pass-requests.ts',
  'lib/routing/service.ts -> lib/distributor/service.ts',
];
const KNOWN_CYCLES: string[] = [
  'lib/distributor/get-mover.ts <-> lib/distributor/mover.ts',
  'lib/distributor/distributor.ts <-> lib/distributor/follow-up.ts',
  'lib/routing/event.ts <-> lib/routing/task-message.ts',
];

describe('the layers of lib/ (docs/DESIGN.md)', () => {
  const layers = layersFromDesign(design);
  const graph = importGraph(root, 'lib');

  it('docs/DESIGN.md gives every folder of lib/ a layer', () => {
    expect(layers.get('errors')).toBe(0);
    for (const file of graph.keys()) expect(() => moduleOf(file, layers)).not.toThrow();
  });

  it('no import runs upward, sideways or between parts', () => {
    const violations = layerViolations(graph, layers);
    expect(violations.filter((v) => !KNOWN_VIOLATIONS.includes(v))).toEqual([]);
    expect(KNOWN_VIOLATIONS.filter((v) => !violations.includes(v))).toEqual([]);
  });

  it('no import cycle', () => {
    const cycles = importCycles(graph).map((cycle) => cycle.join(' <-> '));
    expect(cycles.filter((c) => !KNOWN_CYCLES.includes(c))).toEqual([]);
    expect(KNOWN_CYCLES.filter((c) => !cycles.includes(c))).toEqual([]);
  });

  it('the checks catch an upward import, a sideways one, one between parts and a cycle', () => {
    const fixture = new Map<string, string[]>([
      ['lib/errors.ts', []],
      ['lib/rabbitmq/a.ts', ['lib/config/env.ts']],
      ['lib/config/env.ts', ['lib/errors.ts']],
      ['lib/aws/b.ts', ['lib/rabbitmq/a.ts']],
      ['lib/routing/router.ts', ['lib/distributor/service.ts', 'lib/queues/names.ts']],
      ['lib/routing/service.ts', ['lib/routing/router.ts', 'lib/cleanup/x.ts']],
      ['lib/distributor/service.ts', []],
      ['lib/cleanup/x.ts', ['lib/cleanup/y.ts']],
      ['lib/cleanup/y.ts', ['lib/cleanup/x.ts']],
      ['lib/queues/names.ts', []],
    ]);
    expect(layerViolations(fixture, layers)).toEqual([
      'lib/aws/b.ts -> lib/rabbitmq/a.ts',
      'lib/rabbitmq/a.ts -> lib/config/env.ts',
      'lib/routing/router.ts -> lib/distributor/service.ts',
      'lib/routing/service.ts -> lib/cleanup/x.ts',
    ]);
    expect(importCycles(fixture)).toEqual([['lib/cleanup/x.ts', 'lib/cleanup/y.ts']]);
  });
});

describe('environment-variable names stay at the roots', () => {
  const atRoot = (file: string) => /^lib\/(config\/[^/]+|[^/]+\/service)\.ts$/.test(file);
  const KNOWN_OFFENDERS: string[] = [
    'lib/distributor/distributor.ts',
    'lib/distributor/follow-up.ts',
    'lib/distributor/target-plan.ts',
  ];

  it("no lib/ file below lib/config and the service roots names a 'DISTRIBUTOR_…', 'ROUTER_…' or 'CLEANUP_…' variable", () => {
    const offenders = [...importGraph(root, 'lib').keys()]
      .filter((file) => !atRoot(file))
      .filter((file) => /'(DISTRIBUTOR|ROUTER|CLEANUP)_[A-Z_]+'/.test(readFileSync(join(root, file), 'utf8')))
      .sort();
    expect(offenders.filter((f) => !KNOWN_OFFENDERS.includes(f))).toEqual([]);
    expect(KNOWN_OFFENDERS.filter((f) => !offenders.includes(f))).toEqual([]);
  });
});

describe('file length', () => {
  // Still to be split (issue 28); never add one: name a file in docs/DESIGN.md with why instead.
  const KNOWN_LONG = [
    'lib/cleanup/engine/stack-store.ts',
    'lib/distributor/distributor.ts',
    'lib/distributor/mover.ts',
    'lib/nxrg/registry.ts',
    'lib/routing/router.ts',
  ];
  const named = [...design.matchAll(/^- `(lib\/[^`]+\.ts)`/gm)].map(([, file]) => file);

  it('no lib/ file over 300 lines unless docs/DESIGN.md names it (with why)', () => {
    const long = [...importGraph(root, 'lib').keys()].filter(
      (file) => readFileSync(join(root, file), 'utf8').split('\n').length > 301,
    );
    expect(long.filter((file) => !named.includes(file) && !KNOWN_LONG.includes(file)).sort()).toEqual([]);
    expect(KNOWN_LONG.filter((file) => !long.includes(file))).toEqual([]);
  });
});
