import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { HeadlessResult } from '../../../local/stack/run';
import { services } from '../../harness/services';

const root = join(__dirname, '../../..');

/**
 * The acceptance run of `npm start`, headless and bounded: the same entry point, the real
 * handlers on serverless.yml's schedules sped up, the traffic generator and the demo registry.
 */
describe('npm start --headless (bounded run of the whole local stack)', () => {
  let final: HeadlessResult;
  let logDir: string;

  beforeAll(async () => {
    logDir = mkdtempSync(join(tmpdir(), 'fairway-start-'));
    const { stdout } = await promisify(execFile)(
      'node',
      [
        'scripts/run-ts.mjs',
        'local/start.ts',
        '--headless',
        '--duration',
        '150',
        '--speed',
        '600',
        '--log',
        join(logDir, 'local.log'),
      ],
      {
        cwd: root,
        env: { ...process.env, AMQP_URL: services.amqpUrl, RABBITMQ_MANAGEMENT_URL: services.managementUrl },
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    final = JSON.parse(stdout) as HeadlessResult;
  }, 200_000);
  afterAll(() => rmSync(logDir, { recursive: true, force: true }));

  const tenant = (name: string) => final.tenants.find((t) => t.tenant === name)!;

  it('settles before its time is up, with no uncaught error', () => {
    expect(final.settled).toBe(true);
    expect(final.uncaughtErrors).toBe(0);
  });

  it('sinks the noisy tenant to a low priority level and keeps the quiet ones at level 1', () => {
    expect(tenant('noisy-bulk-scanner').level).toBeGreaterThanOrEqual(7);
    expect(tenant('quiet-clinic-a').level).toBe(1);
    expect(tenant('quiet-clinic-b').level).toBe(1);
    for (const t of final.tenants) expect(t.deadLettered).toBe(0);
  });

  it('moves staged documents of every tenant to the worker', () => {
    for (const name of ['noisy-bulk-scanner', 'quiet-clinic-a', 'quiet-clinic-b']) {
      expect(tenant(name).routed).toBeGreaterThan(0);
      expect(tenant(name).processed).toBeGreaterThan(0);
    }
    expect(final.distributor!.invocations).toBeGreaterThan(0);
    expect(final.distributor!.errors).toBe(0);
  });

  it('runs passes on demand between the scheduled ones, and shows the wait in staging the distributor measured', () => {
    expect(final.passesOnDemand).toBeGreaterThan(0);
    // Measured from the router's stamp when a pass moved them: a tenant moved in the last 30 s has one.
    const measured = final.tenants.filter((t) => t.waitSeconds !== undefined);
    expect(measured.length).toBeGreaterThan(0);
    for (const t of measured) expect(t.waitSeconds).toBeGreaterThanOrEqual(0);
  });

  it('drains every cleanup stack with no dead letters, and the eligible demo documents are gone', () => {
    expect(final.registry.eligible).toBe(0);
    expect(final.registry.repositoryPending).toBe(0);
    for (const job of final.jobs) {
      // A second fill means the stack was found empty after the first generation ran to the end.
      expect(job).toMatchObject({ deadLetters: 0, errors: 0 });
      expect(job.fills).toBeGreaterThanOrEqual(2);
      expect(job.deleted).toBeGreaterThan(0);
    }
  });

  it('wrote the functions’ structured logs and EMF metrics to the log file, not the terminal', () => {
    const lines = readFileSync(join(logDir, 'local.log'), 'utf8').split('\n').filter(Boolean);
    expect(lines.some((l) => l.includes('"_aws"') && l.includes('"Fairway"'))).toBe(true);
  });
});
