#!/usr/bin/env node
// Builds the operator CLI once into dist/fairway.cjs (`npm run build:cli`; `npm install` runs it
// through `prepare`). Everything it needs is bundled, so it starts without a TypeScript step and
// runs from an install without dev dependencies. bin/fairway rebuilds it when a source is newer.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const esbuild = await import('esbuild').catch(() => undefined);
if (!esbuild) {
  // `npm install --omit=dev` runs `prepare` too: an install without esbuild keeps the build it has.
  if (process.argv.includes('--if-available')) process.exit(0);
  console.error('build-cli: esbuild is a dev dependency; install dev dependencies to build the CLI.');
  process.exit(2);
}

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

await esbuild.build({
  entryPoints: [join(root, 'local/cli/main.ts')],
  outfile: join(root, 'dist/fairway.cjs'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node22',
  sourcemap: 'linked',
  // Classes keep their names: errors print as `DatabaseError`, not a name renamed apart from pg's own.
  keepNames: true,
  // pg's optional native binding; pg falls back to JavaScript without it.
  external: ['pg-native'],
  logLevel: 'warning',
});
