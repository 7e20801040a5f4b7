import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireHold } from '../harness/own-node-holds';

/** Whether `promise` has settled after the holds had several polls (250 ms apart) to notice a change. */
async function settledSoon(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  return settled;
}

// The holds that keep the broker-restart test apart from the files using the node it restarts.
describe('holds on the tests’ own RabbitMQ node', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fairway-holds-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('lets shared holders in together', async () => {
    const first = await acquireHold('shared', dir);
    const second = await acquireHold('shared', dir);
    first();
    second();
  });

  it('keeps the alone holder waiting until every shared holder left, and new shared holders until it left', async () => {
    const releaseShared = await acquireHold('shared', dir);
    const alone = acquireHold('alone', dir);
    expect(await settledSoon(alone)).toBe(false);
    // A shared holder arriving while the alone one waits waits too, so the restart is not starved.
    const later = acquireHold('shared', dir);
    expect(await settledSoon(later)).toBe(false);
    releaseShared();
    const releaseAlone = await alone;
    expect(await settledSoon(later)).toBe(false);
    releaseAlone();
    (await later)();
  });

  it('lets one alone holder in at a time', async () => {
    const releaseFirst = await acquireHold('alone', dir);
    const second = acquireHold('alone', dir);
    expect(await settledSoon(second)).toBe(false);
    releaseFirst();
    (await second)();
  });

  it('ignores a hold whose process has died', async () => {
    // No process has this pid (above the kernel's pid_max).
    writeFileSync(join(dir, 'alone'), '99999999');
    writeFileSync(join(dir, 'shared-99999999-dead'), '99999999');
    (await acquireHold('shared', dir))();
    (await acquireHold('alone', dir))();
  });
});
