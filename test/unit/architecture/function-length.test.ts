import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { importGraph } from '../../harness/import-graph';

const root = join(__dirname, '../../..');
const MAX_LINES = 60;

/** Each function, arrow or method of `source` whose body spans more than MAX_LINES lines, as `name: lines`. */
function longFunctions(file: string, source: string): Map<string, number> {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const lineOf = (position: number) => sf.getLineAndCharacterOfPosition(position).line;
  const long = new Map<string, number>();
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const body = node.body as ts.Node;
      const lines = lineOf(body.getEnd()) - lineOf(body.getStart(sf)) + 1;
      if (lines > MAX_LINES) long.set(`${file} ${nameOf(node, sf)}`, lines);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return long;
}

/** A function's own name, else the name it is assigned to, else its line. */
function nameOf(node: ts.Node, sf: ts.SourceFile): string {
  const named = (n: ts.Node) => ('name' in n && n.name ? (n.name as ts.Node).getText(sf) : undefined);
  return named(node) ?? named(node.parent) ?? `(line ${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1})`;
}

describe(`function length: no lib/ function over ${MAX_LINES} lines`, () => {
  const long = new Map(
    [...importGraph(root, 'lib').keys()].flatMap((file) => [
      ...longFunctions(file, readFileSync(join(root, file), 'utf8')),
    ]),
  );

  it('every function body is short', () => {
    expect([...long].map(([name, lines]) => `${name}: ${lines} lines`)).toEqual([]);
  });

  it('the measure counts a function, an arrow and a method, by their names', () => {
    const body = Array.from({ length: MAX_LINES }, (_, i) => `  x${i}();`).join('\n');
    const source = `function f() {\n${body}\n}\nconst g = () => {\n${body}\n};\nclass C {\n  m() {\n${body}\n  }\n  n() {}\n}\n`;
    expect(longFunctions('x.ts', source)).toEqual(
      new Map([
        ['x.ts f', MAX_LINES + 2],
        ['x.ts g', MAX_LINES + 2],
        ['x.ts m', MAX_LINES + 2],
      ]),
    );
  });
});
