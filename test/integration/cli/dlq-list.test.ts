import { runCli } from '../../../local/cli/cli';
import { sendBodies, startTestQueues } from '../../harness/sqs';

// Issue 27 item 4: `fairway dlq list --tenant X --json` counts the tenant's dead letters, not the whole queue's.
describe('fairway dlq list with a filter (fauxqs)', () => {
  let queues: Awaited<ReturnType<typeof startTestQueues>>;
  let env: Record<string, string>;

  beforeAll(async () => {
    queues = await startTestQueues();
    env = {
      SQS_ENDPOINT: queues.emulator.endpoint,
      AWS_REGION: queues.emulator.region,
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      FAIRWAY_STAGE: 'test',
    };
    const event = (tenantId: string, target: string) => JSON.stringify({ target, tenantId, message: { body: 'x' } });
    await sendBodies(queues.client, queues.deadLetterQueue.url, [
      event('clinic-a', 'ocr'),
      event('clinic-a', 'scan'),
      event('clinic-b', 'ocr'),
    ]);
  });
  afterAll(() => queues?.stop());

  async function list(...filter: string[]) {
    let stdout = '';
    const code = await runCli(['dlq', 'list', ...filter, '--log', '/dev/null', '--json'], env, {
      out: (t) => (stdout += t),
      err: () => undefined,
    });
    expect(code).toBe(0);
    return JSON.parse(stdout) as { count: number; total: number; messages: unknown[] };
  }

  it.each([
    [[], 3],
    [['--tenant', 'clinic-a'], 2],
    [['--target', 'ocr'], 2],
    [['--tenant', 'clinic-a', '--target', 'ocr'], 1],
    [['--tenant', 'nobody'], 0],
  ])('%j: count is what matches, total the whole queue', async (filter, count) => {
    const listed = await list(...filter);
    expect(listed).toMatchObject({ count, total: 3 });
    expect(listed.messages).toHaveLength(count);
  });
});
