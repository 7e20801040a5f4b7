import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/**
 * Powertools Logger drops a log attribute whose key it reserves, with only a WARN; the
 * router's per-tenant line once lost its `level` that way. This reads every log call under lib/
 * with the type checker, so attributes spread from a typed object (`{ ...routed }`) count too.
 * The list is Powertools Logger 2.x's `ReservedKeys` (its constants.ts), which the package does not export.
 */
const reservedKeys = ['level', 'message', 'sampling_rate', 'service', 'timestamp'];
const logMethods = new Set(['trace', 'debug', 'info', 'warn', 'error', 'critical']);

const root = join(__dirname, '../../..');

function typeScriptFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return typeScriptFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** `file:line key` for every reserved key an attribute argument of a Powertools log call can carry. */
function reservedKeysLogged(files: string[]): string[] {
  const { config } = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, root);
  const program = ts.createProgram(files, { ...options, noEmit: true });
  const checker = program.getTypeChecker();
  const found: string[] = [];

  const isLogger = (node: ts.Expression) => {
    const declaration = checker.getTypeAtLocation(node).getSymbol()?.declarations?.[0];
    return declaration?.getSourceFile().fileName.includes('@aws-lambda-powertools/logger') ?? false;
  };
  const keysOf = (type: ts.Type): string[] =>
    type.isUnion() ? type.types.flatMap(keysOf) : checker.getPropertiesOfType(type).map((p) => p.name);

  for (const source of program.getSourceFiles().filter((s) => files.includes(s.fileName))) {
    const visit = (node: ts.Node) => {
      if (
        ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression) &&
        logMethods.has(node.expression.name.text) &&
        isLogger(node.expression.expression)
      ) {
        for (const attributes of node.arguments.slice(1)) {
          for (const key of keysOf(checker.getTypeAtLocation(attributes))) {
            if (!reservedKeys.includes(key)) continue;
            const { line } = source.getLineAndCharacterOfPosition(node.getStart());
            found.push(`${relative(root, source.fileName)}:${line + 1} ${key}`);
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

describe('log attributes', () => {
  it('no log call under lib/ uses a key Powertools reserves', () => {
    expect(reservedKeysLogged(typeScriptFiles(join(root, 'lib')))).toEqual([]);
  });
});
