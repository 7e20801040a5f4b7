import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'amqplib';
import { WORK_EVENT } from '../../../lib/work-board/pass-trigger';
import { eventually } from '../../harness/eventually';
import { bundleForNode } from '../../harness/lambda-node';
import { type DistributorFixture, distributorFixture, tally } from './fixture';

const target = 'busy';
const staging = `${target}»/a`;
const STAGED = 3_000;
/** The killed execution had a minute left: before leases were renewed, its targets waited that long. */
const REMAINING_MS = 60_000;
const buffered = { DISTRIBUTOR_BUFFER_HORIZON_MS: '250', DISTRIBUTOR_MAX_EXECUTIONS: '1' };

describe('an execution killed while it refills a busy target', () => {
  let f: DistributorFixture;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fairway-recovery-'));
    bundleForNode(join(__dirname, 'pass-process.ts'), join(dir, 'pass.js'));
    f = await distributorFixture();
  });
  afterAll(async () => {
    await f?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('its target is refilled by the next execution within seconds, nothing lost, never past its max length', async () => {
    await f.stage(target, { 'x-max-length': 1000 }, { [staging]: STAGED });
    // Workers at ~100 msg/s: 10 at a time, each acked 100 ms after delivery.
    const model = await connect(f.rabbit.amqpUrl);
    const channel = await model.createChannel();
    await channel.prefetch(10);
    const consumed: string[] = [];
    let stopped = false;
    await channel.consume(target, (message) => {
      if (!message) return;
      consumed.push(String(message.properties.messageId));
      setTimeout(() => stopped || channel.ack(message), 100);
    });
    const child = spawn(process.execPath, [join(dir, 'pass.js')], {
      env: {
        ...process.env,
        ...f.env,
        ...buffered,
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
        AWS_REGION: 'us-east-1',
        PASS_TUNING: JSON.stringify({ backstopIntervalMs: 0 }),
        PASS_REMAINING_MS: String(REMAINING_MS),
        POWERTOOLS_LOG_LEVEL: 'ERROR',
      },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    // Killed once it is refilling: more moved than a first fill.
    await eventually(
      async () => (STAGED - (await f.depth(staging)) > 100 ? true : undefined),
      'the execution to refill the target',
    );
    child.kill('SIGKILL');
    await exited;
    const killedAt = Date.now();
    const stagedAtKill = await f.depth(staging);

    // The first message moved after the kill, seen from outside (the staging queue shrinks).
    let firstMovedAt: number | undefined;
    const watching = (async () => {
      while (firstMovedAt === undefined && Date.now() - killedAt < REMAINING_MS) {
        if ((await f.depth(staging)) < stagedAtKill) firstMovedAt = Date.now();
        else await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    // Executions started as routers would, one after another: each ends at once while the killed one's slot lives.
    const distributor = f.distributor(buffered);
    let maxDepth = 0;
    let refilledAt: number | undefined;
    while (refilledAt === undefined && Date.now() - killedAt < REMAINING_MS) {
      const execution = await distributor.run(WORK_EVENT, 3_000 + 10_000);
      maxDepth = Math.max(maxDepth, await f.depth(target));
      if (execution.moved > 0) refilledAt = Date.now();
    }
    await watching;
    expect(refilledAt).toBeDefined();
    const recoveredMs = refilledAt! - killedAt;
    const firstMoved = firstMovedAt === undefined ? 'none seen' : `${firstMovedAt - killedAt} ms`;
    process.stdout.write(
      `crash recovery: first message moved ${firstMoved} after the kill; ` +
        `the execution that moved it ended ${recoveredMs} ms after\n`,
    );
    // The lease and slot lapse LEASE_MS (4 s) after their last renewal, then a first refill: seconds,
    // not the killed invocation's timeout. Half of it is the bound, so a loaded machine stays green.
    expect(recoveredMs).toBeLessThan(REMAINING_MS / 2);
    expect(await f.depth(staging)).toBeLessThan(stagedAtKill);
    expect(maxDepth).toBeLessThanOrEqual(1000);

    stopped = true;
    await model.close();
    const { unique } = tally([...consumed, ...(await f.drain(target)), ...(await f.drain(staging))]);
    expect(unique.size).toBe(STAGED);
  }, 120_000);
});
