import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** Each file under `dir` (relative to `root`, with `/`) and the files of `root` it imports relatively. */
export function importGraph(root: string, dir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const path of sources(join(root, dir))) {
    const imports = [...readFileSync(path, 'utf8').matchAll(/(?:\bfrom|\bimport)\s*\(?\s*'(\.[^']+)'/g)]
      .map((match) => resolveImport(dirname(path), match[1] ?? ''))
      .filter((target): target is string => target !== undefined)
      .map((target) => toPosix(relative(root, target)));
    graph.set(toPosix(relative(root, path)), [...new Set(imports)]);
  }
  return graph;
}

/** Every import cycle in `graph`, each as the files of one strongly connected component (Tarjan). */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)?.includes(file)) cycles.push(component.sort());
  };
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) visit(file);
  return cycles;
}

function resolveImport(from: string, specifier: string): string | undefined {
  const base = resolve(from, specifier);
  return [`${base}.ts`, join(base, 'index.ts'), base].find(
    (candidate) => candidate.endsWith('.ts') && existsSync(candidate),
  );
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const toPosix = (path: string) => path.split('\\').join('/');
