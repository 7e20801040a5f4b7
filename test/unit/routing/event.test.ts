import { readFileSync } from 'node:fs';
import type { SQSRecord } from 'aws-lambda';
import { InvalidEventError } from '../../../lib/platform/errors';
import { type AfterProcessEvent, parseAfterProcessRecord } from '../../../lib/routing/event';
import { stagingDestination, stagingQueueName } from '../../../lib/staging/staging-names';
import { fixturePath } from '../../fixtures';

const fixture = (name: string) => readFileSync(fixturePath(name), 'utf8');
const record = (body: string, messageAttributes: SQSRecord['messageAttributes'] = {}) => ({ body, messageAttributes });
const event = (overrides: Record<string, unknown> = {}, message: Record<string, unknown> = {}) =>
  JSON.stringify({ target: 'worker-in', tenantId: 't1', ...overrides, message: { body: 'hello', ...message } });

function rejection(body: string): InvalidEventError {
  try {
    parseAfterProcessRecord(record(body));
  } catch (error) {
    if (error instanceof InvalidEventError) return error;
    throw error;
  }
  throw new Error('expected the event to be rejected');
}

describe("Fairway's after-process event", () => {
  it('gives the target, ids, body and every property', () => {
    const full: AfterProcessEvent = {
      target: 'worker-in',
      tenantId: 'acme',
      workflowName: 'enrichment',
      message: {
        body: 'aGk=',
        encoding: 'base64',
        properties: {
          contentType: 'application/json',
          contentEncoding: 'utf-8',
          headers: { 'x-caf-worker-retry': '2', nested: { a: [1, true, null] } },
          deliveryMode: 1,
          priority: 3,
          correlationId: 'c1',
          replyTo: 'r',
          expiration: '60000',
          messageId: 'm1',
          timestamp: 1_700_000_000,
          type: 'DocumentWorkerTask',
          userId: 'guest',
          appId: 'worker',
        },
      },
    };
    const parsed = parseAfterProcessRecord(record(JSON.stringify(full)));
    const { priority: _replaced, ...kept } = full.message.properties!;
    expect(parsed).toEqual({
      target: 'worker-in',
      tenantId: 'acme',
      workflowName: 'enrichment',
      body: Buffer.from('hi'),
      // the priority is the router's to set (SPEC §1); everything else is kept
      properties: kept,
    });
  });

  it('reads a utf8 body and makes it persistent unless told otherwise', () => {
    expect(parseAfterProcessRecord(record(event({}, { body: 'é' })))).toEqual({
      target: 'worker-in',
      tenantId: 't1',
      body: Buffer.from('é', 'utf8'),
      properties: { deliveryMode: 2 },
    });
  });

  it.each<[string, string, string[]]>([
    ['not JSON', 'Test message.', ['body']],
    ['a JSON array', '[1]', ['body']],
    ['a tenant containing »', event({ tenantId: 'a»b' }), ['tenantId']],
    ['a tenant containing /', event({ tenantId: 'a/b' }), ['tenantId']],
    ['a numeric tenant', event({ tenantId: 7 }), ['tenantId']],
    ['a body that is not a string', event({}, { body: { text: 'x' } }), ['message.body']],
    ['a body that is not base64', event({}, { body: 'a*b', encoding: 'base64' }), ['message.body']],
    ['a missing message', JSON.stringify({ target: 'q', tenantId: 't' }), ['message']],
    ['an unknown property', event({}, { properties: { priorty: 1 } }), ['message.properties.priorty']],
    ['a bad delivery mode', event({}, { properties: { deliveryMode: 3 } }), ['message.properties.deliveryMode']],
    ['a target naming a staging queue', event({ target: 'q»/other' }), ['target']],
    ['a target over 255 bytes', event({ target: 'q'.repeat(256) }), ['target']],
    ['several problems', JSON.stringify({ target: 1, message: { body: 2 } }), ['target', 'message.body']],
  ])('rejects %s, naming the field', (_, body, fields) => {
    const error = rejection(body);
    expect(error.fields).toEqual(fields);
    expect(error.message).toMatch(new RegExp(`^${fields[0]!.replace(/\./g, '\\.')}: `));
  });

  it('never quotes the value in its error', () => {
    expect(rejection(event({ tenantId: { secret: 'Jens Jensen 010190-1234' } })).message).not.toContain('Jens');
    expect(rejection(event({}, { body: 12345678 })).message).toBe('message.body: must be a string');
  });

  it('lets a tenant id make a staging name over 255 bytes: the name falls back, the event is not rejected', () => {
    const parsed = parseAfterProcessRecord(record(event({ tenantId: 't'.repeat(300) })));
    expect(stagingDestination(parsed)).toEqual({ queue: 'worker-in', shortened: 'target' });
  });

  it.each([
    ['no tenant', { target: 'q', message: { body: 'x' } }],
    ['an empty tenant', { target: 'q', tenantId: '', message: { body: 'x' } }],
    ['an empty tenant and workflow', { target: 'q', tenantId: '', workflowName: '', message: { body: 'x' } }],
  ])('reads %s as a tenant-less message without a workflow', (_, body) => {
    const parsed = parseAfterProcessRecord(record(JSON.stringify(body)));
    expect(parsed).not.toHaveProperty('tenantId');
    expect(parsed).not.toHaveProperty('workflowName');
    expect(stagingQueueName(parsed)).toBe('q');
  });

  it('reads an empty workflow as none', () => {
    expect(stagingQueueName(parseAfterProcessRecord(record(event({ workflowName: '' }))))).toBe('worker-in»/t1');
  });
});

describe('Worker Framework task message (fixtures in test/fixtures)', () => {
  it('takes target from `to`, tenant from customData.tenantId, workflow from CAF_WORKFLOW_NAME', () => {
    const body = fixture('taskmessage-document-tenant-workflow.json');
    const parsed = parseAfterProcessRecord(
      record(body, {
        'x-caf-worker-retry': { dataType: 'Number', stringValue: '2', stringListValues: [], binaryListValues: [] },
      }),
    );
    expect(parsed).toEqual({
      target: 'dataprocessing-entity-extract-in',
      tenantId: 'tenant1',
      workflowName: 'example_workflow',
      body: Buffer.from(body, 'utf8'),
      properties: { deliveryMode: 2, headers: { 'x-caf-worker-retry': '2' } },
    });
    // taskmessage-NOTES.md, "Applied to the fixture"
    expect(stagingQueueName(parsed)).toBe('dataprocessing-entity-extract-in»/tenant1/example_workflow');
  });

  it('keeps SQS message attributes as headers, binary ones as bytes', () => {
    const attributes = JSON.parse(fixture('sqs-event-message-attributes.json')).Records[0].messageAttributes;
    const parsed = parseAfterProcessRecord(record(fixture('taskmessage-document-tenant-workflow.json'), attributes));
    expect(parsed.properties.headers).toEqual({
      Attribute1: 'AttributeValue1',
      Attribute2: '123',
      Attribute3: Buffer.from('1100'),
    });
  });

  it('publishes a task message without SQS attributes with no header table at all', () => {
    // amqplib makes a given header table the prototype of a new object per publish: `{}` costs that too.
    const parsed = parseAfterProcessRecord(record(fixture('taskmessage-document-tenant-workflow.json')));
    expect(parsed.properties).toEqual({ deliveryMode: 2 });
    expect(Object.hasOwn(parsed.properties, 'headers')).toBe(false);
  });

  const withTaskData = (taskData: unknown, envelope: Record<string, unknown> = {}) => {
    const message = JSON.parse(fixture('taskmessage-document-tenant-workflow.json'));
    return JSON.stringify({
      ...message,
      taskData: Buffer.from(JSON.stringify(taskData)).toString('base64'),
      ...envelope,
    });
  };

  it.each<[string, unknown, string | undefined]>([
    [
      'customData.workflowName when there is no field',
      { document: { fields: {} }, customData: { tenantId: 't', workflowName: 'enrichment' } },
      'enrichment',
    ],
    [
      'the field before customData',
      {
        document: { fields: { CAF_WORKFLOW_NAME: [{ data: 'f' }] } },
        customData: { tenantId: 't', workflowName: 'c' },
      },
      'f',
    ],
    [
      'no storage reference as a name',
      {
        document: { fields: { CAF_WORKFLOW_NAME: [{ data: 'ref', encoding: 'storage_ref' }] } },
        customData: { tenantId: 't', workflowName: 'c' },
      },
      'c',
    ],
    [
      'the top-level fields of a DocumentWorker task',
      { fields: { CAF_WORKFLOW_NAME: [{ data: 'top' }] }, customData: { tenantId: 't' } },
      'top',
    ],
    ['none when empty', { customData: { tenantId: 't', workflowName: '' } }, undefined],
  ])('finds the workflow: %s', (_, taskData, workflow) => {
    expect(parseAfterProcessRecord(record(withTaskData(taskData))).workflowName).toBe(workflow);
  });

  // Upstream's examples (worker-message-prioritization MessageRouter with its tenant and workflow
  // mutators): a tenant-less message is staged by its workflow alone, or goes straight to its target.
  it.each<[string, unknown, string]>([
    [
      'workflow, no tenant',
      { document: { fields: { CAF_WORKFLOW_NAME: [{ data: 'sample-message-prioritization-workflow' }] } } },
      'action_1-in»/sample-message-prioritization-workflow',
    ],
    ['neither', { document: { fields: {} }, customData: { tenantId: '' } }, 'action_1-in'],
    [
      'an empty workflow field, no tenant',
      { document: { fields: { CAF_WORKFLOW_NAME: [{ data: '' }] } } },
      'action_1-in',
    ],
  ])('routes a task message with %s as upstream does', (_, taskData, queue) => {
    const parsed = parseAfterProcessRecord(record(withTaskData(taskData, { to: 'action_1-in' })));
    expect(parsed.tenantId).toBeUndefined();
    expect(stagingQueueName(parsed)).toBe(queue);
  });

  it('reads the unstowing example (custom data partitionId, jobId) as tenant-less, bound for its target', () => {
    const parsed = parseAfterProcessRecord(record(fixture('taskmessage-taskunstowing.json')));
    expect(parsed).toMatchObject({ target: 'worker-taskunstowing-in' });
    expect(parsed.tenantId).toBeUndefined();
    expect(stagingQueueName(parsed)).toBe('worker-taskunstowing-in');
  });

  it.each<[string, string, string[]]>([
    // to: null and no tenantId (older custom data keys projectId/workflowId)
    ['the data-processing example', fixture('taskmessage-dataprocessing-workflow.json'), ['to']],
    ['a tenant containing /', withTaskData({ customData: { tenantId: 'a/b' } }), ['taskData.customData.tenantId']],
    [
      'a workflow field containing »',
      withTaskData({ document: { fields: { CAF_WORKFLOW_NAME: [{ data: 'w»x' }] } }, customData: { tenantId: 't' } }),
      ['taskData.document.fields.CAF_WORKFLOW_NAME'],
    ],
    [
      'taskData that is not base64 JSON',
      JSON.stringify({ ...JSON.parse(fixture('taskmessage-taskunstowing.json')), taskData: 'bm90IGpzb24=' }),
      ['taskData'],
    ],
    ['taskData that is not base64', withTaskData({}, { taskData: 'not base64!' }), ['taskData']],
    [
      'custom data that is not a string map',
      withTaskData({ customData: { tenantId: 5 } }),
      ['taskData.customData.tenantId'],
    ],
  ])('rejects %s, naming the field', (_, body, fields) => {
    expect(rejection(body).fields).toEqual(fields);
  });
});
