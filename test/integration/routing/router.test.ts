import { readFileSync } from 'node:fs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { STAGED_AT_HEADER, takeStagedAt } from '../../../lib/staging/staging-names';
import { createObservability, lambdaHandler } from '../../../lib/wiring/lambda-function';
import { createRouterService } from '../../../lib/wiring/router';
import { fixturePath } from '../../fixtures';
import {
  event,
  lambdaContext,
  type RouterTestBed,
  routerConfig,
  sqsEvent,
  sqsRecord,
  startRouterTestBed,
} from '../../harness/routing-events';

describe('router, end to end through the handler (real RabbitMQ, dynalite)', () => {
  let bed: RouterTestBed;
  let handler: ReturnType<
    typeof lambdaHandler<Parameters<typeof bed.service.route>[0], Awaited<ReturnType<typeof bed.service.route>>>
  >;

  beforeAll(async () => {
    bed = await startRouterTestBed({
      queues: {
        direct: { durable: true, arguments: { 'x-max-priority': 10 } },
        'worker-in': {
          durable: true,
          arguments: { 'x-max-priority': 10, 'x-max-length': 1000, 'x-overflow': 'reject-publish' },
        },
        'dataprocessing-entity-extract-in': { durable: true, arguments: { 'x-queue-type': 'quorum' } },
      },
      env: {
        ROUTER_TARGETS: JSON.stringify({
          direct: { bypassStaging: true },
          'direct-missing': { bypassStaging: true },
          configured: { durable: true, arguments: { 'x-max-priority': 5 } },
        }),
      },
    });
    handler = lambdaHandler(createObservability('router'), bed.service.route);
  });
  afterAll(() => bed?.close());
  beforeEach(() => {
    bed.recorded.failures.length = 0;
    bed.recorded.tenants.length = 0;
    bed.recorded.kept.length = 0;
  });

  const invoke = (records: ReturnType<typeof sqsRecord>[]) => handler(sqsEvent(records), lambdaContext);

  const drain = (queue: string) => bed.drain(queue);

  it('delivers a quiet tenant before a noisy one: level 1 is the larger AMQP priority', async () => {
    // 40 events of a noisy tenant in batches of 10, then 2 of a quiet one; nobody consumes meanwhile.
    for (let batch = 0; batch < 4; batch++) {
      const records = Array.from({ length: 10 }, (_, i) =>
        sqsRecord(event('direct', 'noisy', `noisy-${batch * 10 + i}`)),
      );
      expect(await invoke(records)).toEqual({ batchItemFailures: [] });
    }
    expect(
      await invoke([sqsRecord(event('direct', 'quiet', 'quiet-0')), sqsRecord(event('direct', 'quiet', 'quiet-1'))]),
    ).toEqual({
      batchItemFailures: [],
    });
    // One report line per tenant per batch, with the level after its last check (the insight rule's input).
    expect(bed.recorded.tenants).toEqual([
      { tenant: 'noisy', documents: 10, priorityLevel: 5 },
      { tenant: 'noisy', documents: 10, priorityLevel: 8 },
      { tenant: 'noisy', documents: 10, priorityLevel: 9 },
      { tenant: 'noisy', documents: 10, priorityLevel: 9 },
      { tenant: 'quiet', documents: 2, priorityLevel: 1 },
    ]);

    const consumed = await drain('direct');
    const bodies = consumed.map((m) => m.content.toString());
    // The noisy tenant's first three checks (counts 0, -1, -2) are level 1 like the quiet tenant's,
    // so they tie and stay in publish order; the quiet tenant overtakes the 37 that sank.
    expect(bodies.slice(0, 5)).toEqual(['noisy-0', 'noisy-1', 'noisy-2', 'quiet-0', 'quiet-1']);
    expect(bodies.slice(5)).toEqual(Array.from({ length: 37 }, (_, i) => `noisy-${i + 3}`));
    const priorityOf = (body: string) => consumed.find((m) => m.content.toString() === body)!.properties.priority;
    expect([
      priorityOf('noisy-0'),
      priorityOf('noisy-3'),
      priorityOf('noisy-20'),
      priorityOf('noisy-39'),
      priorityOf('quiet-1'),
    ]).toEqual([9, 8, 2, 1, 9]);

    // Within the reset interval the noisy tenant stays sunk: the quiet tenant now goes first outright.
    await invoke([1, 2, 3].map((i) => sqsRecord(event('direct', 'noisy', `noisy-late-${i}`))));
    await invoke([sqsRecord(event('direct', 'quiet', 'quiet-2'))]);
    expect((await drain('direct')).map((m) => m.content.toString())).toEqual([
      'quiet-2',
      'noisy-late-1',
      'noisy-late-2',
      'noisy-late-3',
    ]);
  });

  it('routes to target»/tenant/workflow, declaring it like its target, keeping every property and header', async () => {
    const properties = {
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      headers: { 'x-caf-worker-retry': '2', 'x-nested': { a: 1 } },
      deliveryMode: 2 as const,
      correlationId: 'corr-1',
      replyTo: 'replies',
      expiration: '600000',
      messageId: 'm-1',
      timestamp: 1_700_000_000,
      type: 'DocumentWorkerTask',
      appId: 'worker-x',
    };
    const before = Date.now();
    const result = await invoke([
      sqsRecord({
        target: 'worker-in',
        tenantId: 't1',
        workflowName: 'wf1',
        message: { body: '{"doc":1}', properties },
      }),
      sqsRecord(event('worker-in', 't2', 'second')),
    ]);
    expect(result).toEqual({ batchItemFailures: [] });

    const staged = await drain('worker-in»/t1/wf1');
    expect(staged).toHaveLength(1);
    expect(staged[0]!.content.toString()).toBe('{"doc":1}');
    expect(staged[0]!.properties).toMatchObject({ ...properties, priority: 9 });
    // The staged copy also says when it was staged, for the distributor to measure its wait (and take off).
    const { stagedAt, headers: routedHeaders } = takeStagedAt(staged[0]!.properties.headers);
    expect(staged[0]!.properties.headers).toHaveProperty(STAGED_AT_HEADER);
    expect(routedHeaders).toEqual(properties.headers);
    expect(stagedAt).toBeGreaterThanOrEqual(before);
    expect(stagedAt).toBeLessThanOrEqual(Date.now());
    expect((await drain('worker-in»/t2')).map((m) => m.content.toString())).toEqual(['second']);
    expect(await drain('worker-in')).toEqual([]);

    const queue = await bed.rabbit.api<{
      durable: boolean;
      auto_delete: boolean;
      exclusive: boolean;
      arguments: object;
    }>('GET', `/api/queues/${encodeURIComponent(bed.rabbit.vhost)}/${encodeURIComponent('worker-in»/t1/wf1')}`);
    // Same durability and arguments, less the length limit that would drop or refuse waiting messages,
    // and less x-max-priority (ROUTER_STAGING_PRIORITIES=none, the default: issue 24, item 3).
    expect(queue).toMatchObject({ durable: true, auto_delete: false, exclusive: false });
    expect(queue.arguments).not.toHaveProperty('x-max-length');
    expect(queue.arguments).not.toHaveProperty('x-max-priority');
    // Its own overflow: a length limit a policy sets makes the broker nack, never drop (issue 23, item 1).
    expect(queue.arguments).toHaveProperty('x-overflow', 'reject-publish');
  });

  it('routes a Worker Framework task message to the staging queue its custom data names (fixture)', async () => {
    const body = readFileSync(fixturePath('taskmessage-document-tenant-workflow.json'), 'utf8');
    const attributes = {
      'x-caf-worker-retry': { dataType: 'Number', stringValue: '1', stringListValues: [], binaryListValues: [] },
    };
    expect(await invoke([sqsRecord(body, attributes)])).toEqual({ batchItemFailures: [] });

    const staging = 'dataprocessing-entity-extract-in»/tenant1/example_workflow';
    const queue = await bed.rabbit.api<{ durable: boolean; arguments: object }>(
      'GET',
      `/api/queues/${encodeURIComponent(bed.rabbit.vhost)}/${encodeURIComponent(staging)}`,
    );
    // Its target is quorum; a staging queue is classic all the same (docs/router.md "Staging queues").
    expect(queue).toMatchObject({ durable: true, arguments: { 'x-queue-type': 'classic' } });
    const [message] = await drain(staging);
    expect(message!.content.toString()).toBe(body);
    expect(message!.properties).toMatchObject({ deliveryMode: 2, priority: 9, headers: { 'x-caf-worker-retry': '1' } });
  });

  it('uses a staging queue that already exists with other arguments as it is', async () => {
    await bed.channel.assertQueue('worker-in»/preset', { durable: true });
    expect(await invoke([sqsRecord(event('worker-in', 'preset', 'kept'))])).toEqual({ batchItemFailures: [] });
    expect((await drain('worker-in»/preset')).map((m) => m.content.toString())).toEqual(['kept']);
    expect(bed.recorded.kept).toEqual([{ stagingQueue: 'worker-in»/preset', target: 'worker-in' }]);
  });

  it('declares the new staging queues of a batch beside several kept as they are (each refusal closes the declare channel)', async () => {
    const kept = ['kept1', 'kept2', 'kept3'];
    for (const tenant of kept) await bed.channel.assertQueue(`worker-in»/${tenant}`, { durable: true });
    const fresh = ['fresh1', 'fresh2', 'fresh3'];
    const records = [...kept, ...fresh].flatMap((t) => [event('worker-in', t, t), event('worker-in', t, t)]);
    expect(await invoke(records.map((record) => sqsRecord(record)))).toEqual({ batchItemFailures: [] });
    for (const tenant of [...kept, ...fresh]) {
      expect((await drain(`worker-in»/${tenant}`)).map((m) => m.content.toString())).toEqual([tenant, tenant]);
    }
    expect(bed.recorded.kept.map((k) => k.stagingQueue).sort()).toEqual(kept.map((t) => `worker-in»/${t}`));
  });

  it('takes a staging queue shape from ROUTER_TARGETS over the management API', async () => {
    expect(await invoke([sqsRecord(event('configured', 't1', 'x'))])).toEqual({ batchItemFailures: [] });
    const queue = await bed.rabbit.api<{ durable: boolean; arguments: object }>(
      'GET',
      `/api/queues/${encodeURIComponent(bed.rabbit.vhost)}/${encodeURIComponent('configured»/t1')}`,
    );
    expect(queue).toMatchObject({ durable: true, arguments: { 'x-overflow': 'reject-publish' } });
    expect(queue.arguments).not.toHaveProperty('x-max-priority'); // copied only with ROUTER_STAGING_PRIORITIES=copy
  });

  it('fails each malformed event alone, naming the field, and routes the good ones of the batch', async () => {
    const good1 = sqsRecord(event('worker-in', 'good', 'g1'));
    const notJson = sqsRecord('Test message.');
    const badTenant = sqsRecord(event('worker-in', 'other»/t1', 'x'));
    const bodyNotString = sqsRecord(JSON.stringify({ target: 'worker-in', tenantId: 'good', message: { body: 42 } }));
    const missingTarget = sqsRecord(event('no-such-queue', 'good', 'x'));
    const good2 = sqsRecord(event('worker-in', 'good', 'g2'));

    const result = await invoke([good1, notJson, badTenant, bodyNotString, missingTarget, good2]);

    const bad = [notJson, badTenant, bodyNotString, missingTarget];
    expect(result.batchItemFailures).toEqual(bad.map((r) => ({ itemIdentifier: r.messageId })));
    expect(bed.recorded.failures.map((f) => [f.messageId, f.kind, f.fields])).toEqual([
      [notJson.messageId, 'Rejected', ['body']],
      [badTenant.messageId, 'Rejected', ['tenantId']],
      [bodyNotString.messageId, 'Rejected', ['message.body']],
      [missingTarget.messageId, 'Rejected', ['target']],
    ]);
    expect(bed.recorded.failures[2]!.reason).toBe('InvalidEventError: message.body: must be a string');
    expect((await drain('worker-in»/good')).map((m) => m.content.toString())).toEqual(['g1', 'g2']);
    // No queue was made from a bad id.
    const names = (
      await bed.rabbit.api<{ name: string }[]>(
        'GET',
        `/api/queues/${encodeURIComponent(bed.rabbit.vhost)}?columns=name`,
      )
    ).map((q) => q.name);
    expect(names.filter((n) => n.includes('other') || n.includes('no-such'))).toEqual([]);
  });

  it('routes a tenant-less message by workflow alone at the quiet level, counted apart, charging no counter', async () => {
    const byWorkflow = sqsRecord(JSON.stringify({ target: 'worker-in', workflowName: 'wf', message: { body: 'w' } }));
    const neither = sqsRecord(JSON.stringify({ target: 'worker-in', tenantId: '', message: { body: 'n' } }));
    const counts = { ...bed.recorded.counts };
    bed.recorded.tenantless.length = 0;

    expect(await invoke([byWorkflow, neither])).toEqual({ batchItemFailures: [] });

    const [staged] = await drain('worker-in»/wf');
    expect(staged!.content.toString()).toBe('w');
    expect(staged!.properties.priority).toBe(9);
    const [direct] = await drain('worker-in');
    expect(direct!.content.toString()).toBe('n');
    expect(direct!.properties.priority).toBe(9);
    // Straight to its target: no staging, no stamp for the worker to see.
    expect(staged!.properties.headers).toHaveProperty(STAGED_AT_HEADER);
    expect(direct!.properties.headers).not.toHaveProperty(STAGED_AT_HEADER);
    // No counter was checked: DynamoDB refuses an empty key, so a check would have failed the records.
    expect(bed.recorded.tenants).toEqual([]);
    expect(bed.recorded.tenantless).toEqual([{ documents: 2, destinations: { 'worker-in»/wf': 1, 'worker-in': 1 } }]);
    expect(bed.recorded.counts.RoutedWithoutTenant! - (counts.RoutedWithoutTenant ?? 0)).toBe(2);
  });

  it('rejects a tenant-less message when ROUTER_MISSING_TENANT=reject', async () => {
    const strict = createRouterService(
      routerConfig(bed.rabbit, bed.dynamo, { ROUTER_MISSING_TENANT: 'reject' }),
      bed.recorded.report,
    );
    try {
      const record = sqsRecord(JSON.stringify({ target: 'worker-in', workflowName: 'wf', message: { body: 'x' } }));
      expect(await strict.route(sqsEvent([record]))).toEqual({
        batchItemFailures: [{ itemIdentifier: record.messageId }],
      });
      expect(bed.recorded.failures.map((f) => [f.kind, f.fields])).toEqual([['Rejected', ['tenantId']]]);
    } finally {
      await strict.close();
    }
  });

  it('routes a message whose staging name would pass 255 bytes under a shorter name, and counts it', async () => {
    bed.recorded.shortened.length = 0;
    const longWorkflow = sqsRecord(event('worker-in', 'long', 'lw', 'w'.repeat(250)));
    const longTenant = sqsRecord(event('worker-in', 't'.repeat(300), 'lt'));
    expect(await invoke([longWorkflow, longTenant])).toEqual({ batchItemFailures: [] });
    expect((await drain('worker-in»/long')).map((m) => m.content.toString())).toEqual(['lw']);
    expect((await drain('worker-in')).map((m) => m.content.toString())).toEqual(['lt']);
    expect(bed.recorded.shortened).toEqual([
      { target: 'worker-in', queue: 'worker-in»/long', shortened: 'discriminators-dropped' },
      { target: 'worker-in', queue: 'worker-in', shortened: 'target' },
    ]);
  });

  // Issue 24, item 4: a queue reaped behind the cache is declared again and the batch's records
  // routed within it (before, the returned record failed and waited for SQS to deliver it again).
  it('redeclares a staging queue deleted behind its cache and routes the returned message within the batch', async () => {
    expect(await invoke([sqsRecord(event('worker-in', 'gone', 'first'))])).toEqual({ batchItemFailures: [] });
    await drain('worker-in»/gone');
    await bed.rabbit.api(
      'DELETE',
      `/api/queues/${encodeURIComponent(bed.rabbit.vhost)}/${encodeURIComponent('worker-in»/gone')}`,
    );

    const returned = sqsRecord(event('worker-in', 'gone', 'second'));
    const elsewhere = sqsRecord(event('worker-in', 'other', 'fine'));
    expect(await invoke([returned, elsewhere])).toEqual({ batchItemFailures: [] });
    expect(bed.recorded.failures).toEqual([]);
    expect((await drain('worker-in»/gone')).map((m) => m.content.toString())).toEqual(['second']);
    expect((await drain('worker-in»/other')).map((m) => m.content.toString())).toEqual(['fine']);
  });

  it('never reports a returned message as routed: a publish to a missing target that bypasses staging fails', async () => {
    const record = sqsRecord(event('direct-missing', 't', 'x'));
    const routed = sqsRecord(event('worker-in', 'beside', 'y'));
    expect(await invoke([record, routed])).toEqual({ batchItemFailures: [{ itemIdentifier: record.messageId }] });
    expect(await drain('worker-in»/beside')).toHaveLength(1);
    expect(bed.recorded.failures).toEqual([
      expect.objectContaining({
        messageId: record.messageId,
        kind: 'BrokerFailures',
        reason: expect.stringMatching(/returned/),
      }),
    ]);
  });

  it('fails the records the broker nacked and reports the rest of the batch routed', async () => {
    // A full queue that refuses publishes makes the broker nack them: a real, per-message failure.
    await bed.channel.assertQueue('full', {
      durable: true,
      arguments: { 'x-max-length': 1, 'x-overflow': 'reject-publish' },
    });
    const nacking = createRouterService(
      routerConfig(bed.rabbit, bed.dynamo, { ROUTER_TARGETS: '{"full":{"bypassStaging":true}}' }),
      bed.recorded.report,
    );
    try {
      const records = ['a', 'b', 'c'].map((body) => sqsRecord(event('full', 't', body)));
      const result = await nacking.route(sqsEvent(records));
      expect(result.batchItemFailures).toEqual(records.slice(1).map((r) => ({ itemIdentifier: r.messageId })));
      expect(bed.recorded.failures.map((f) => [f.kind, f.reason])).toEqual([
        [
          'BrokerFailures',
          'BrokerError: the broker refused it (nack): its queue is at a length limit (overflow reject-publish) or could not take it (caused by Error: message nacked)',
        ],
        [
          'BrokerFailures',
          'BrokerError: the broker refused it (nack): its queue is at a length limit (overflow reject-publish) or could not take it (caused by Error: message nacked)',
        ],
      ]);
      expect((await drain('full')).map((m) => m.content.toString())).toEqual(['a']);
    } finally {
      await nacking.close();
    }
  });

  it('fails a bypass target that does not exist instead of dropping its message', async () => {
    const service2 = createRouterService(
      routerConfig(bed.rabbit, bed.dynamo, { ROUTER_TARGETS: '{"missing":{"bypassStaging":true}}' }),
      bed.recorded.report,
    );
    try {
      const record = sqsRecord(event('missing', 't', 'x'));
      const beside = sqsRecord(event('direct', 't', 'y'));
      expect(await service2.route(sqsEvent([record, beside]))).toEqual({
        batchItemFailures: [{ itemIdentifier: record.messageId }],
      });
    } finally {
      await service2.close();
    }
  });

  it('fails every record it touched when the broker is unreachable, and counts no document', async () => {
    const unreachable = createRouterService(
      routerConfig(bed.rabbit, bed.dynamo, {
        AMQP_URL: `amqp://guest:secret@127.0.0.1:1/${encodeURIComponent(bed.rabbit.vhost)}`,
      }),
      bed.recorded.report,
    );
    try {
      const records = [sqsRecord(event('worker-in', 'offline', 'a')), sqsRecord(event('worker-in', 'offline', 'b'))];
      // Every record failed on the broker: the invocation fails (whole-batch-failure.test.ts).
      await expect(unreachable.route(sqsEvent(records))).rejects.toThrow(/2 of 2 records failed/);
      expect(bed.recorded.failures.map((f) => f.kind)).toEqual(['BrokerFailures', 'BrokerFailures']);
      expect(bed.recorded.failures[0]!.reason).not.toContain('secret');
      const { Item } = await bed.dynamo.doc.send(
        new GetCommand({ TableName: 'TenantCountersTable', Key: { pk: 'offline' } }),
      );
      expect(Item).toBeUndefined();
    } finally {
      await unreachable.close();
    }
  });
});
