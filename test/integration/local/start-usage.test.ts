import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { services } from '../../harness/services';

const root = join(__dirname, '../../..');
/** Where a headless run writes its JSON: not the checkout (its default, fairway-local.json). */
const result = ['--result', join(tmpdir(), `fairway-start-usage-${process.pid}.json`)];

/** `npm start -- <args>`: exit code, stdout and stderr. */
async function npmStart(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await promisify(execFile)(
      'node',
      [join(root, 'scripts/run-ts.mjs'), join(root, 'local/start.ts'), ...args],
      // PGlite's start alone took 73 s at load 20: the bound is for a hung stack, not a slow one.
      { env: { ...process.env, ...env }, timeout: 300_000 },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const { code, stdout, stderr } = error as { code: number; stdout: string; stderr: string };
    return { code, stdout, stderr };
  }
}

describe('npm start, before it starts anything', () => {
  it('--help prints the usage and exits 0', async () => {
    const { code, stdout } = await npmStart(['--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('usage: npm start [-- options]');
    expect(stdout).toContain('--headless');
  }, 60_000);

  it('an unknown flag prints what was wrong and the usage, not a stack trace', async () => {
    const { code, stderr } = await npmStart(['--sped', '3']);
    expect(code).toBe(2);
    expect(stderr).toContain("npm start: Unknown option '--sped'");
    expect(stderr).toContain('usage: npm start');
    expect(stderr).not.toMatch(/\n\s+at /);
  }, 60_000);

  it('an AMQP port that does not answer gets the same "how to start it" message as the management API', async () => {
    const amqp = new URL(services.amqpUrl);
    amqp.port = '1';
    const { code, stdout } = await npmStart(['--headless', ...result], {
      AMQP_URL: amqp.toString(),
      RABBITMQ_MANAGEMENT_URL: services.managementUrl,
    });
    expect(code).toBe(1);
    expect(stdout).toContain('RabbitMQ does not answer AMQP at amqp://127.0.0.1:1 ');
    expect(stdout).toContain('Start a local RabbitMQ with its management plugin');
  }, 300_000);

  it('--headless --duration 3 runs the stack for 3 s once it is up, and exits 1 when it has not settled', async () => {
    const { code, stdout } = await npmStart(['--headless', '--duration', '3', ...result], {
      AMQP_URL: services.amqpUrl,
      RABBITMQ_MANAGEMENT_URL: services.managementUrl,
    });
    const final = JSON.parse(stdout) as { settled: boolean; runSeconds: number };
    expect(final.settled).toBe(false);
    expect(final.runSeconds).toBeGreaterThanOrEqual(3);
    expect(code).toBe(1);
  }, 300_000);
});
