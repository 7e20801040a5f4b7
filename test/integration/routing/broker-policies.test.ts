import { BatchFailedError } from '../../../lib/platform/errors';
import { managementPath } from '../../../lib/rabbitmq/management';
import { event, type RouterTestBed, sqsEvent, sqsRecord, startRouterTestBed } from '../../harness/routing-events';

/**
 * Issue 23, item 1 (router side): a length limit that comes from a policy or an operator policy,
 * not from the staging queue's arguments, dropped staged messages that the router had reported
 * routed (a vhost policy `max-length: 5`: 20 routed, 15 gone). Every record reported routed must
 * be in its staging queue; a record the queue cannot keep fails, with a reason, and is counted.
 */
describe('router: broker policies on staging queues (real RabbitMQ, dynalite)', () => {
  let bed: RouterTestBed;

  const policy = (kind: 'policies' | 'operator-policies', name: string, pattern: string, definition: object) =>
    bed.rabbit.api('PUT', managementPath('api', kind, bed.rabbit.vhost, name), {
      pattern,
      definition,
      'apply-to': 'queues',
      priority: 1,
    });

  beforeAll(async () => {
    const priority = { durable: true, arguments: { 'x-max-priority': 10 } };
    const quorum = { durable: true, arguments: { 'x-queue-type': 'quorum' } };
    // The router is built before the policies but opens nothing until its first route.
    // A quorum target's staging queues are classic unless ROUTER_TARGETS keeps quorum; these two do.
    const keptQuorum = { durable: true, arguments: { 'x-queue-type': 'quorum' } };
    bed = await startRouterTestBed({
      env: { ROUTER_TARGETS: JSON.stringify({ 'quorum-target': keptQuorum, 'quorum-limited': keptQuorum }) },
      queues: {
        limited: priority,
        bytes: priority,
        operator: priority,
        unlimited: priority,
        'old-limited': priority,
        'quorum-target': quorum,
        'quorum-limited': quorum,
      },
    });
    await policy('policies', 'limit', '^(limited|old-limited)»', { 'max-length': 5 });
    await policy('policies', 'bytes', '^bytes»', { 'max-length-bytes': 30 });
    // A quorum queue takes a policy's overflow over its own argument.
    await policy('policies', 'quorum-drop', '^quorum-target»', { 'max-length': 5, overflow: 'drop-head' });
    await policy('policies', 'quorum-limit', '^quorum-limited»', { 'max-length': 5 });
    await policy('operator-policies', 'operator-limit', '^operator»', { 'max-length': 5 });
  });
  afterAll(() => bed?.close());
  let tests = 0;
  let tenant = '';
  beforeEach(() => {
    bed.recorded.failures.length = 0;
    bed.recorded.kept.length = 0;
    for (const key of Object.keys(bed.recorded.counts)) delete bed.recorded.counts[key];
    tenant = `tenant${++tests}`;
  });

  /** Routes `count` records of this test's tenant to `target`: what was reported routed, and what the staging queue holds. */
  async function route(target: string, count = 20, body = (i: number) => `message-${String(i).padStart(2, '0')}`) {
    const records = Array.from({ length: count }, (_, i) => sqsRecord(event(target, tenant, body(i))));
    // A batch whose every record failed on the broker fails the invocation (BatchFailedError).
    const failed = await bed.service.route(sqsEvent(records)).then(
      (result) => result.batchItemFailures.length,
      (error: unknown) => {
        if (!(error instanceof BatchFailedError)) throw error;
        return count;
      },
    );
    const held = (await bed.channel.checkQueue(`${target}»/${tenant}`)).messageCount;
    return { routed: count - failed, failed, held };
  }

  it('a vhost policy max-length 5: 5 routed and held, 15 failed as refused by the queue', async () => {
    expect(await route('limited')).toEqual({ routed: 5, failed: 15, held: 5 });
    expect(bed.recorded.counts.BrokerFailures).toBe(15);
    expect(bed.recorded.failures[0]).toMatchObject({
      kind: 'BrokerFailures',
      reason: expect.stringMatching(/refused it.*length limit/),
    });
  });

  it('a vhost policy max-length-bytes 30: only what fits is reported routed', async () => {
    expect(await route('bytes', 10, (i) => `ten-bytes${i}`)).toEqual({ routed: 3, failed: 7, held: 3 });
  });

  it('an operator policy max-length 5: 5 routed and held', async () => {
    expect(await route('operator')).toEqual({ routed: 5, failed: 15, held: 5 });
  });

  it('a quorum staging queue under a policy max-length 5 (no overflow): its own reject-publish applies', async () => {
    // A quorum queue's reject-publish is approximate (a burst passes the limit before it rejects),
    // but never drops: what was reported routed is what the queue holds.
    const first = await route('quorum-limited');
    expect(first.held).toBe(first.routed);
    const second = await route('quorum-limited');
    expect(second).toMatchObject({ routed: 0, failed: 20, held: first.routed });
  });

  it("a quorum staging queue whose policy's overflow is drop-head: nothing is published to it", async () => {
    expect(await route('quorum-target')).toEqual({ routed: 0, failed: 20, held: 0 });
    expect(bed.recorded.failures[0]).toMatchObject({
      kind: 'BrokerFailures',
      reason: expect.stringMatching(
        /staging queue "quorum-target»\/tenant\d+" could drop waiting messages: max-length 5 with overflow drop-head/,
      ),
    });
  });

  it('a staging queue declared before x-overflow, under a length policy: nothing is published to it', async () => {
    await bed.channel.assertQueue(`old-limited»/${tenant}`, { durable: true, arguments: { 'x-max-priority': 10 } });
    expect(await route('old-limited')).toEqual({ routed: 0, failed: 20, held: 0 });
    expect(bed.recorded.kept).toEqual([{ stagingQueue: `old-limited»/${tenant}`, target: 'old-limited' }]);
    expect(bed.recorded.failures[0]!.reason).toMatch(
      /could drop waiting messages: max-length 5 with overflow drop-head/,
    );
  });

  it('a staging queue declared before x-overflow, under no limit, is still routed to', async () => {
    await bed.channel.assertQueue(`unlimited»/${tenant}`, { durable: true, arguments: { 'x-max-priority': 10 } });
    expect(await route('unlimited')).toEqual({ routed: 20, failed: 0, held: 20 });
    expect(bed.recorded.kept).toEqual([{ stagingQueue: `unlimited»/${tenant}`, target: 'unlimited' }]);
  });
});
