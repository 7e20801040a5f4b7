import { ManagementApiError } from '../../../lib/platform/errors';
import { ManagementClient } from '../../../lib/rabbitmq/management';

/** A fetch that answers every request with `body` as JSON (or as raw text when `raw`), and records the URLs. */
function fakeFetch(body: unknown, { status = 200, raw = false } = {}) {
  const urls: string[] = [];
  const fetchFn = (async (url: string) => {
    urls.push(url);
    return new Response(raw ? String(body) : JSON.stringify(body), { status });
  }) as unknown as typeof fetch;
  return { fetchFn, urls };
}

const client = (body: unknown, options?: { status?: number; raw?: boolean }) =>
  new ManagementClient('http://user:pw@broker:15672', 'v1', fakeFetch(body, options).fetchFn);

/** The ManagementApiError `action` rejects with. */
async function failure(action: Promise<unknown>): Promise<ManagementApiError> {
  const error = await action.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ManagementApiError);
  return error as ManagementApiError;
}

describe('ManagementClient parses what the API answers', () => {
  it('keeps the fields Fairway reads, ignores others, and counts a queue without stats yet as empty', async () => {
    const q1 = {
      name: 'q1',
      durable: true,
      auto_delete: false,
      arguments: { x: 9 },
      messages: 4,
      messages_ready: 3,
      message_bytes_ready: 30,
    };
    const page = {
      items: [
        { ...q1, node: 'rabbit@a' },
        { name: 'fresh', durable: false, auto_delete: true, arguments: {} },
      ],
      page: 1,
      page_count: 1,
      filtered_count: 2,
    };
    expect(await client(page).listQueues()).toEqual([
      q1,
      {
        name: 'fresh',
        durable: false,
        auto_delete: true,
        arguments: {},
        messages: 0,
        messages_ready: 0,
        message_bytes_ready: 0,
      },
    ]);
  });

  it('reads an unknown queue (404) as undefined, and a rate from the window average or the instant rate', async () => {
    expect(await client({ error: 'Object Not Found' }, { status: 404 }).getQueue('gone')).toBeUndefined();
    const stats = {
      message_stats: { ack: 10, ack_details: { rate: 1, avg_rate: 2.5 }, deliver_no_ack_details: { rate: 0.5 } },
    };
    expect(await client(stats).consumptionRate('q1', 60)).toBe(3);
    expect(await client({}).consumptionRate('q1', 60)).toBeUndefined();
    // The API's empty property list: a queue with none of the asked columns yet, an empty table.
    expect(await client([]).consumptionRate('q1', 60)).toBeUndefined();
    expect(await client({ message_stats: [] }).consumptionRate('q1', 60)).toBeUndefined();
    expect((await client({ name: 'q1', arguments: [] }).getQueue('q1'))?.arguments).toEqual({});
  });

  it.each([
    [
      'a page whose queue count is text',
      { items: [{ name: 'q1', messages: '4' }], page: 1, page_count: 1 },
      'items.0.messages',
    ],
    ['a page without items', { page: 1, page_count: 1 }, 'items'],
    ['a queue without a name', { items: [{ messages: 1 }], page: 1, page_count: 1 }, 'items.0.name'],
    ['an error object instead of a page', { error: 'bad_request', reason: 'x' }, 'items'],
  ])('refuses %s, naming the path and the field, with the parse error as cause', async (_, body, field) => {
    const error = await failure(client(body).listQueues());
    expect(error.message).toContain('answered GET /api/queues/v1 with an unexpected body');
    expect(error.message).toContain(`${field}:`);
    expect(error.message).not.toContain('pw');
    expect(error.cause).toBeDefined();
    expect(error.status).toBe(200);
  });

  it('refuses a queue or rate of the wrong shape rather than passing it on', async () => {
    expect((await failure(client({ name: 'q1', arguments: 'none' }).getQueue('q1'))).message).toContain(
      'GET /api/queues/v1/q1 with an unexpected body (arguments:',
    );
    const rate = await failure(
      client({ message_stats: { ack_details: { avg_rate: 'fast' } } }).consumptionRate('q1', 60),
    );
    expect(rate.message).toContain('message_stats.ack_details.avg_rate:');
  });

  it('refuses a body that is not JSON, keeping the parse error as cause', async () => {
    const error = await failure(client('<html>proxy error</html>', { raw: true }).getQueue('q1'));
    expect(error.message).toContain('answered GET /api/queues/v1/q1 with a body that is not JSON');
    expect((error.cause as Error).name).toBe('SyntaxError');
  });
});
