#!/usr/bin/env node
import { mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
// Runs a TypeScript entry point (bench, npm start, the operator CLI) the way Lambda runs the
// handlers: bundled by esbuild into CommonJS. Bundling is what lets CommonJS code load
// @middy/core and fauxqs, which are ESM-only; every other package stays external and loads from node_modules.
import { build } from 'esbuild';

const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  console.error('usage: node scripts/run-ts.mjs <entry.ts> [args…]');
  process.exit(2);
}

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'node_modules', '.cache', 'fairway-run');
mkdirSync(outdir, { recursive: true });
const outfile = join(outdir, `${basename(entry).replace(/\.ts$/, '')}-${process.pid}.cjs`);

const bundleOnlyEsmOnly = {
  name: 'bundle-only-esm-only',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path.startsWith('@middy/') || args.path === 'fauxqs' ? undefined : { path: args.path, external: true },
    );
  },
};

await build({
  entryPoints: [resolve(entry)],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node22',
  sourcemap: 'inline',
  outfile,
  plugins: [bundleOnlyEsmOnly],
  logLevel: 'warning',
});

process.on('exit', () => rmSync(outfile, { force: true }));
process.argv = [process.argv[0], resolve(entry), ...args];
createRequire(import.meta.url)(outfile);
