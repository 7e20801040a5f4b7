import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { bundleForNode } from '../../harness/lambda-node';
import { type DistributorFixture, distributorFixture, STATE_TABLE, tally } from './fixture';

const RUNS = 20;
const STAGING = ['crash»/t1', 'crash»/t2/w1', 'crash»/t2/w2', 'crash»/t3'];
const PER_QUEUE = 5_000;
/** Prefetch of the passes, in turn: from one message in flight per queue to many. */
const PREFETCHES = [1, 5, 25];

describe('a pass killed with SIGKILL at random points', () => {
  let f: DistributorFixture;
  let dir: string;
  let script: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fairway-crash-'));
    script = join(dir, 'pass.js');
    bundleForNode(join(__dirname, 'pass-process.ts'), script);
    f = await distributorFixture();
  });
  afterAll(async () => {
    await f?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts a pass in a child process and SIGKILLs it after `killAfterMs`; resolves with how it ended and when. */
  const runAndKill = (killAfterMs: number, prefetch: number) =>
    new Promise<{ ending: 'killed' | 'finished'; ms: number }>((resolve, reject) => {
      const started = Date.now();
      const child = spawn(process.execPath, [script], {
        env: {
          ...process.env,
          ...f.env,
          AWS_ACCESS_KEY_ID: 'local',
          AWS_SECRET_ACCESS_KEY: 'local',
          AWS_REGION: 'us-east-1',
          // The target takes 1000 per pass, so every run has moving to do.
          DISTRIBUTOR_TARGETS: JSON.stringify({ crash: { maxLength: 1_000 } }),
          PASS_TUNING: JSON.stringify({
            maxPrefetch: prefetch,
            refillThresholdPercent: 0,
            safetyMarginMs: 0,
            // Each run's backstop lists and marks the target, so every run has a pass to be killed in.
            backstopIntervalMs: 0,
            // The execution ends after its pass instead of waiting for the target's next due time.
            waitBoundMs: 0,
          }),
          PASS_REMAINING_MS: '20000',
          POWERTOOLS_LOG_LEVEL: 'ERROR',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      child.on('error', reject);
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        if (signal === 'SIGKILL') resolve({ ending: 'killed', ms: Date.now() - started });
        else if (code === 0) resolve({ ending: 'finished', ms: Date.now() - started });
        else reject(new Error(`The pass failed (exit ${code}): ${stderr}`));
      });
    });

  it(`${RUNS} kills: every message is still in staging, in the target or with its consumer; duplicates counted`, async () => {
    await f.stage('crash', { 'x-max-priority': 9 }, Object.fromEntries(STAGING.map((name) => [name, PER_QUEUE])));

    const consumed: string[] = []; // what the target's workers took between passes
    const afterPass = async () => {
      // The killed execution's lease and slot would only expire at its timeout; the next should not wait.
      await f.dynamo.doc.send(new DeleteCommand({ TableName: STATE_TABLE, Key: { pk: 'lease#crash' } }));
      await f.dynamo.doc.send(new DeleteCommand({ TableName: STATE_TABLE, Key: { pk: 'work-board' } }));
      consumed.push(...(await f.drain('crash')));
    };
    // One whole pass per prefetch tells how long a pass takes here, so that kills land anywhere
    // within one: start-up, backstop listing, board, lease, planning or moving.
    const duration = new Map<number, number>();
    for (const prefetch of PREFETCHES) {
      duration.set(prefetch, (await runAndKill(60_000, prefetch)).ms);
      await afterPass();
    }
    const endings: string[] = [];
    for (let run = 0; run < RUNS; run++) {
      const prefetch = PREFETCHES[run % PREFETCHES.length]!;
      const killAfterMs = 50 + Math.floor(Math.random() * Math.max(50, 0.95 * duration.get(prefetch)! - 50));
      endings.push((await runAndKill(killAfterMs, prefetch)).ending);
      await afterPass();
    }

    const left = (await Promise.all(STAGING.map(f.drain))).flat();
    const all = tally([...consumed, ...left]);
    const expected = STAGING.flatMap((name) => Array.from({ length: PER_QUEUE }, (_, i) => `${name}-${i}`));
    const lost = expected.filter((id) => !all.unique.has(id));
    process.stdout.write(
      `crash test: ${endings.filter((e) => e === 'killed').length}/${RUNS} passes killed, ` +
        `whole passes took ${[...duration.values()].join('/')} ms, ${consumed.length} delivered to the target, ${left.length} left in staging, ${all.duplicates} duplicates, ${lost.length} lost\n`,
    );
    expect(lost).toEqual([]);
    expect(all.unique.size).toBe(expected.length);
    expect(endings).toContain('killed');
    expect(consumed.length).toBeGreaterThan(0);
  }, 600_000); // 27 s one file at a time, over 60 s beside other files and two CPU hogs: the bound only stops a hung run
});
