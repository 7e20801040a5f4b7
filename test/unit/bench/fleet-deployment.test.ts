import { LambdaUsage, ManagementCounts, stagingArguments } from '../../../bench/lib/fleet-deployment';

describe("the fleet's management API counts", () => {
  const realFetch = global.fetch;
  beforeEach(() => {
    global.fetch = jest.fn(async () => new Response('[]')) as typeof fetch;
  });
  afterEach(() => {
    global.fetch = realFetch;
  });

  it('counts every request and the vhost listings by caller, and passes each request on', async () => {
    const counts = new ManagementCounts('v1');
    const base = 'http://127.0.0.1:15672';
    const distributor = counts.fetchFor(() => 'distributor, on demand');
    const router = counts.fetchFor(() => 'router');
    await distributor(`${base}/api/queues/v1?columns=name&page=1&page_size=500&pagination=true`);
    await distributor(`${base}/api/queues/v1?columns=name&page=2&page_size=500&pagination=true`);
    await distributor(`${base}/api/policies/v1`);
    await router(`${base}/api/queues/v1/some-target`);
    expect(global.fetch).toHaveBeenCalledTimes(4);
    expect(counts.requests).toEqual(
      new Map([
        ['distributor, on demand', 3],
        ['router', 1],
      ]),
    );
    expect(counts.listings).toEqual(new Map([['distributor, on demand', 1]]));
    expect(counts.total(counts.requests, 'distributor')).toBe(3);
    expect(counts.total(counts.requests)).toBe(4);
    counts.reset();
    expect(counts.total(counts.requests)).toBe(0);
  });
});

describe("a function's Lambda usage", () => {
  it('counts invocations by kind and bills their time at 512 MB, failed ones too', async () => {
    const usage = new LambdaUsage();
    await usage.time('scheduled', async () => undefined);
    await expect(usage.time('on demand', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(usage.invocations).toBe(2);
    expect(usage.byKind).toEqual(
      new Map([
        ['scheduled', 1],
        ['on demand', 1],
      ]),
    );
    expect(usage.gbSeconds).toBeGreaterThan(0);
    expect(usage.gbSeconds).toBeLessThan(0.1);
  });
});

describe('staging queue arguments', () => {
  it("are the router's for a classic target: its type and the router's overflow, no x-max-priority", () => {
    expect(stagingArguments({ 'x-max-priority': 9 })).toEqual({
      'x-queue-type': 'classic',
      'x-overflow': 'reject-publish',
    });
  });
});
