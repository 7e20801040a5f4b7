import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';

/**
 * Every repository path the README and docs/*.md cite exists: backticked paths under the
 * repository's top-level folders (read from the root), and relative links (read from the doc's
 * folder). A `*` in the last segment (`functions/*Cleanup.ts`) must match at least one file.
 */
const root = join(__dirname, '../../..');
const folders = ['lib', 'functions', 'infra', 'test', 'local', 'bench', 'bin', 'scripts', 'docs'];
const docs = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

const pathInCode = new RegExp(`(?:^|[\\s(=])((?:${folders.join('|')})/[^\\s\`'"(),;]*)`, 'g');

/** Backticked paths (inline code and fenced blocks), relative to the repository root. */
function codePaths(markdown: string): string[] {
  const code = [...markdown.matchAll(/```[^\n]*\n([\s\S]*?)```|`([^`\n]+)`/g)].map((m) => m[1] ?? m[2]!);
  return code.flatMap((text) => [...text.matchAll(pathInCode)].map((m) => m[1]!.replace(/[.:]+$/, '')));
}

/** Targets of relative Markdown links, without their #anchor. */
function linkTargets(markdown: string): string[] {
  return [...markdown.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!.replace(/#.*$/, ''))
    .filter((target) => target !== '' && !/^[a-z]+:/i.test(target));
}

/** Placeholders such as `lib/<part>/service.ts` or `lib/…` name no one file. */
const isPlaceholder = (path: string) => /[<>…{}]/.test(path);

const escapeRegExp = (text: string) => text.replace(/[.+?^${}()|[\]\\]/g, '\\$&');

function exists(path: string): boolean {
  if (!path.includes('*')) return existsSync(join(root, path));
  const folder = join(root, dirname(path));
  const name = new RegExp(`^${basename(path).split('*').map(escapeRegExp).join('.*')}$`);
  return existsSync(folder) && readdirSync(folder).some((entry) => name.test(entry));
}

describe.each(docs)('%s', (doc) => {
  const markdown = readFileSync(join(root, doc), 'utf8');

  it('cites only repository paths that exist', () => {
    const missing = codePaths(markdown).filter((path) => !isPlaceholder(path) && !exists(path));
    expect(missing).toEqual([]);
  });

  it('links only to files that exist', () => {
    const missing = linkTargets(markdown)
      .map((target) => relative(root, join(root, dirname(doc), decodeURI(target))))
      .filter((path) => !exists(path));
    expect(missing).toEqual([]);
  });
});

/** Files the repository's text may not cite: notes of the workplace it was built in, not shipped with it. */
const outside = new RegExp(`\\b(${['TOOLING', 'COMMON', 'DEVELOPERS'].join('|')})\\.md\\b|\\.\\./shared/`);
const skipped = new Set(['node_modules', '.git', '.serverless', '.stryker-tmp', 'reports', 'coverage']);

function repositoryFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (skipped.has(entry.name)) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return repositoryFiles(path);
    return /\.(ts|js|mjs|cjs|md|yml|yaml|json|sh)$|^run$/.test(entry.name) ? [path] : [];
  });
}

describe('the repository', () => {
  it('cites no file outside it', () => {
    const citing = repositoryFiles(root)
      .filter((path) => outside.test(readFileSync(path, 'utf8')))
      .map((path) => relative(root, path));
    expect(citing).toEqual([]);
  });

  it('the rule catches a citation', () => {
    expect(outside.test(['see TOOLING', 'md'].join('.'))).toBe(true);
    expect(outside.test(['..', 'shared', 'SPEC.md'].join('/'))).toBe(true);
    expect(outside.test('docs/SPEC.md')).toBe(false);
  });
});
