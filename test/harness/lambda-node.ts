import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';

/** What one container did: each invocation's result, its JSON log lines, and how it ended. */
export interface LambdaRun {
  code: number;
  results: unknown[];
  logs: Record<string, unknown>[];
  stderr: string;
}

/** Bundles `entry` and what it imports into one CommonJS file at `outfile`, for the Lambda runtime's Node. */
export function bundleForNode(entry: string, outfile: string): void {
  buildSync({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'cjs',
    outfile,
    logLevel: 'error',
  });
}

/**
 * Runs Fairway's functions the way Lambda does, each call a fresh Node process (a cold container)
 * bundled by esbuild for the runtime's Node: `run(name, env, events)` invokes function `name` once
 * per event in one container, with exactly `env` (plus PATH) as its environment, so
 * NODE_EXTRA_CA_CERTS there is read at start as on Lambda. `close()` removes the bundle.
 */
export function lambdaNode() {
  const dir = mkdtempSync(join(tmpdir(), 'fairway-lambda-'));
  const script = join(dir, 'lambda-process.js');
  bundleForNode(join(__dirname, 'lambda-process.ts'), script);
  return {
    run(name: string, env: Record<string, string>, events: unknown[] = [{}]): Promise<LambdaRun> {
      return new Promise((resolve, reject) => {
        execFile(
          process.execPath,
          [script, name],
          {
            env: {
              PATH: process.env.PATH ?? '',
              AWS_REGION: 'us-east-1',
              AWS_ACCESS_KEY_ID: 'local',
              AWS_SECRET_ACCESS_KEY: 'local',
              ...env,
              FAIRWAY_EVENTS: JSON.stringify(events),
            },
            timeout: 60_000,
            maxBuffer: 64 * 1024 * 1024,
          },
          (error, stdout, stderr) => {
            if (error && typeof error.code !== 'number') return reject(error);
            const lines = stdout.split('\n');
            resolve({
              code: typeof error?.code === 'number' ? error.code : 0,
              results: lines
                .filter((line) => line.startsWith('FAIRWAY_RESULT '))
                .map((line) => JSON.parse(line.slice('FAIRWAY_RESULT '.length))),
              logs: lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line)),
              stderr,
            });
          },
        );
      });
    },
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}
