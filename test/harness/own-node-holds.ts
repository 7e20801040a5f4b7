import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Test files run in parallel (jest.config.js), and one of them restarts the tests' own RabbitMQ node
 * (test/harness/tls.ts `restartOwnNode`): every file that uses that node holds it for the whole file,
 * `shared` by the files that only use it, `alone` by the one that restarts it. The holds are files in
 * one machine-wide directory, so jest runs of other working copies on this machine take part too.
 * A hold whose process has died is ignored and removed. Both sides announce before they look (a
 * shared holder its file, the alone one its `alone` file), so neither can miss the other; new shared
 * holders wait while an alone one waits, so the restart is not starved.
 */
const HOLDS_DIR = join(tmpdir(), 'fairway-own-node-holds');
const ALONE = 'alone';
/** A file that holds the node waits at most this long for the others: longer than any file takes. */
const HOLD_WAIT_MS = 15 * 60_000;

export type Mode = 'shared' | 'alone';

/** Holds the tests' own RabbitMQ node for this test file: call at the file's top level, before its describe blocks. */
export function holdOwnNode(mode: Mode): void {
  holdForFile(mode, HOLDS_DIR, OWN_NODE);
}

/** Holds what `dir`'s holders share for the whole test file: call at its top level, before any other hook. */
export function holdForFile(mode: Mode, dir: string, what: string): void {
  let release: (() => void) | undefined;
  beforeAll(async () => {
    release = await acquireHold(mode, dir, what);
  }, HOLD_WAIT_MS + 10_000);
  afterAll(() => release?.());
}

const OWN_NODE = "the tests' own RabbitMQ node";

/** Takes a hold in `dir` once the others allow it; returns its release. */
export async function acquireHold(mode: Mode, dir = HOLDS_DIR, what = OWN_NODE): Promise<() => void> {
  mkdirSync(dir, { recursive: true });
  const own = mode === ALONE ? ALONE : `shared-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const path = join(dir, own);
  const release = () => rmSync(path, { force: true });
  const until = Date.now() + HOLD_WAIT_MS;
  const waitedOut = (holding: boolean) => {
    const holders = others(dir, own).join(', ');
    if (holding) release();
    return new Error(`Waited ${HOLD_WAIT_MS / 60_000} min for ${what}, held by ${holders}`);
  };
  if (mode === 'alone') {
    while (!announce(path, true)) {
      if (Date.now() > until) throw waitedOut(false);
      await pause();
    }
    while (others(dir, own).length > 0) {
      if (Date.now() > until) throw waitedOut(true);
      await pause();
    }
    return release;
  }
  for (;;) {
    announce(path, false);
    if (!others(dir, own).includes(ALONE)) return release;
    release();
    if (Date.now() > until) throw waitedOut(false);
    await pause();
  }
}

/** Writes this process's hold; `exclusive` fails (false) when another process's hold of that name is live. */
function announce(path: string, exclusive: boolean): boolean {
  try {
    writeFileSync(path, String(process.pid), { flag: exclusive ? 'wx' : 'w' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if (!alive(path)) rmSync(path, { force: true });
    return false;
  }
}

/** The live holds other than `own`, removing those of processes that have died. */
function others(dir: string, own: string): string[] {
  return readdirSync(dir).filter((name) => {
    if (name === own) return false;
    if (alive(join(dir, name))) return true;
    rmSync(join(dir, name), { force: true });
    return false;
  });
}

function alive(path: string): boolean {
  let pid: number;
  let writtenAt: number;
  try {
    pid = Number(readFileSync(path, 'utf8'));
    writtenAt = statSync(path).mtimeMs;
  } catch {
    return false;
  }
  // A hold being written is still empty: live while its writer may still be writing it.
  if (!Number.isInteger(pid) || pid <= 0) return Date.now() - writtenAt < 5_000;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const pause = () => new Promise((resolve) => setTimeout(resolve, 250));
