import { readFileSync } from 'node:fs';
import type { SQSRecord } from 'aws-lambda';
import { InvalidEventError } from '../../../lib/platform/errors';
import { parseAfterProcessRecord } from '../../../lib/routing/event';
import { checkDiscriminator, checkTargetName } from '../../../lib/staging/staging-names';
import { fixturePath } from '../../fixtures';

// The exact text of each rejection: it is what an operator reads in the log to fix the sender.

const record = (body: string, messageAttributes: SQSRecord['messageAttributes'] = {}) => ({ body, messageAttributes });
const event = (overrides: Record<string, unknown> = {}, message: Record<string, unknown> = {}) =>
  JSON.stringify({ target: 'worker-in', tenantId: 't1', ...overrides, message: { body: 'hello', ...message } });

const taskMessage = JSON.parse(readFileSync(fixturePath('taskmessage-document-tenant-workflow.json'), 'utf8'));
const withTaskData = (taskData: unknown, envelope: Record<string, unknown> = {}) =>
  JSON.stringify({ ...taskMessage, taskData: Buffer.from(JSON.stringify(taskData)).toString('base64'), ...envelope });

function rejection(body: string): string {
  try {
    parseAfterProcessRecord(record(body));
  } catch (error) {
    if (error instanceof InvalidEventError) return error.message;
    throw error;
  }
  throw new Error('expected the event to be rejected');
}

describe('an after-process event that cannot be routed is rejected with a message saying why', () => {
  it.each([
    ['not JSON', 'Test message.', 'body: is not JSON'],
    ['a JSON string', '"text"', 'body: must be a JSON object'],
    ['JSON null', 'null', 'body: must be a JSON object'],
    ['a JSON number', '5', 'body: must be a JSON object'],
    ['a JSON array', '[]', 'body: must be a JSON object'],
    ['a body that is not base64', event({}, { body: 'a*b', encoding: 'base64' }), 'message.body: is not valid base64'],
    [
      'an expiration with a unit',
      event({}, { properties: { expiration: '60s' } }),
      'message.properties.expiration: must be a whole number of milliseconds, as a string',
    ],
    [
      'an expiration with a sign',
      event({}, { properties: { expiration: '-60' } }),
      'message.properties.expiration: must be a whole number of milliseconds, as a string',
    ],
    [
      'an unknown encoding',
      event({}, { encoding: 'hex' }),
      'message.encoding: Invalid option: expected one of "utf8"|"base64"',
    ],
    [
      'a workflow containing /',
      event({ workflowName: 'a/b' }),
      'workflowName: must not contain "/" (it separates the parts of a staging queue name)',
    ],
    [
      'a task message whose taskData is not base64',
      withTaskData({}, { taskData: 'not base64!' }),
      'taskData: must be base64',
    ],
    ['a task message whose taskData is cut short', withTaskData({}, { taskData: 'YWJ' }), 'taskData: must be base64'],
    [
      'a task message whose workflow field has a numeric encoding',
      withTaskData({
        document: { fields: { CAF_WORKFLOW_NAME: [{ data: 'w', encoding: 5 }] } },
        customData: { tenantId: 't' },
      }),
      'taskData.document.fields.CAF_WORKFLOW_NAME.0.encoding: must be a string',
    ],
    [
      'a task message whose document fields are not a map',
      withTaskData({ document: { fields: 'x' }, customData: { tenantId: 't' } }),
      'taskData.document.fields: must be a record',
    ],
    [
      'a task message whose taskData is not JSON',
      withTaskData({}, { taskData: Buffer.from('not json').toString('base64') }),
      'taskData: is not base64 of JSON',
    ],
    [
      'a task message whose target names a staging queue',
      withTaskData({ customData: { tenantId: 't' } }, { to: 'q»/t' }),
      'to: must not contain "»" (it would name a staging queue)',
    ],
    [
      'a task message whose custom-data workflow contains »',
      withTaskData({ customData: { tenantId: 't', workflowName: 'a»b' } }),
      'taskData.customData.workflowName: must not contain "»" (it separates the parts of a staging queue name)',
    ],
    [
      'a task message whose top-level workflow field contains /',
      withTaskData({ fields: { CAF_WORKFLOW_NAME: [{ data: 'a/b' }] }, customData: { tenantId: 't' } }),
      'taskData.fields.CAF_WORKFLOW_NAME: must not contain "/" (it separates the parts of a staging queue name)',
    ],
  ])('%s', (_, body, message) => {
    expect(rejection(body)).toBe(message);
  });

  it('refuses an empty discriminator where one is checked', () => {
    expect(() => checkDiscriminator('workflowName', '')).toThrow('workflowName: must not be empty');
  });

  it('takes a target of exactly 255 bytes, the most RabbitMQ allows, and names the size of a longer one', () => {
    expect(() => checkTargetName(`${'é'.repeat(127)}q`)).not.toThrow();
    expect(() => checkTargetName('é'.repeat(128))).toThrow('target: is 256 bytes; RabbitMQ allows at most 255');
  });
});

describe('an after-process event is read field by field', () => {
  it('leaves out a workflow the event does not name', () => {
    expect(Object.keys(parseAfterProcessRecord(record(event()))).sort()).toEqual([
      'body',
      'properties',
      'target',
      'tenantId',
    ]);
  });

  it('accepts utf8 named explicitly', () => {
    expect(parseAfterProcessRecord(record(event({}, { body: 'é', encoding: 'utf8' }))).body).toEqual(
      Buffer.from('é', 'utf8'),
    );
  });

  it('is a task message only with both taskData and taskClassifier; otherwise it is read as a Fairway event', () => {
    const { taskClassifier: _, ...noClassifier } = taskMessage;
    expect(rejection(JSON.stringify(noClassifier))).toMatch(/^target: is required/);
  });

  it('reads the workflow of a task message from the first utf8 string value of CAF_WORKFLOW_NAME', () => {
    const workflow = (values: unknown[]) =>
      parseAfterProcessRecord(
        record(withTaskData({ document: { fields: { CAF_WORKFLOW_NAME: values } }, customData: { tenantId: 't' } })),
      ).workflowName;
    expect(workflow([null, { data: 7 }, { data: 'ref', encoding: 'storage_ref' }, { data: 'w' }])).toBe('w');
    expect(workflow([{ data: 'w', encoding: null }])).toBe('w');
    expect(workflow([{ data: '' }, { data: 'second' }])).toBeUndefined();
    expect(workflow([])).toBeUndefined();
  });

  it('takes the custom-data workflow of a task message whose document has no fields', () => {
    const parsed = parseAfterProcessRecord(
      record(withTaskData({ document: {}, customData: { tenantId: 't', workflowName: 'c' } })),
    );
    expect(parsed.workflowName).toBe('c');
    const noCustomData = withTaskData({ document: { fields: { CAF_WORKFLOW_NAME: [{ data: 'f' }] } } });
    const tenantless = parseAfterProcessRecord(record(noCustomData));
    expect([tenantless.tenantId, tenantless.workflowName]).toEqual([undefined, 'f']);
  });

  it('reads a task message without custom data as one without tenant or workflow', () => {
    const parsed = parseAfterProcessRecord(record(withTaskData({})));
    expect(Object.keys(parsed).sort()).toEqual(['body', 'properties', 'target']);
  });

  it('publishes a task message exactly as received, as UTF-8', () => {
    const body = withTaskData({ customData: { tenantId: 'tenant-é' } });
    expect(parseAfterProcessRecord(record(body)).body).toEqual(Buffer.from(body, 'utf8'));
  });

  it('keeps a binary SQS attribute only with a binary value, and leaves out an attribute without a value', () => {
    const parsed = parseAfterProcessRecord(
      record(withTaskData({ customData: { tenantId: 't' } }), {
        bytes: { dataType: 'Binary', binaryValue: 'AQI=', stringListValues: [], binaryListValues: [] },
        labelled: { dataType: 'Binary.label', binaryValue: 'AQI=', stringListValues: [], binaryListValues: [] },
        text: { dataType: 'String', stringValue: 'AQI=', stringListValues: [], binaryListValues: [] },
        textWithBytes: {
          dataType: 'String',
          stringValue: 't',
          binaryValue: 'AQI=',
          stringListValues: [],
          binaryListValues: [],
        },
        notBinary: { dataType: 'String.Binary', stringValue: 's', stringListValues: [], binaryListValues: [] },
        binaryAsText: { dataType: 'Binary', stringValue: 'b', stringListValues: [], binaryListValues: [] },
        empty: { dataType: 'String', stringListValues: [], binaryListValues: [] },
      }),
    );
    expect(parsed.properties.headers).toStrictEqual({
      bytes: Buffer.from([1, 2]),
      labelled: Buffer.from([1, 2]),
      text: 'AQI=',
      textWithBytes: 't',
      notBinary: 's',
      binaryAsText: 'b',
    });
  });
});
