import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { messageGroupId } from '../../../local/sqs/message-group';
import { fixturePath } from '../../fixtures';

describe('messageGroupId: the tenant the router would read, as an SQS message group', () => {
  it.each<[string, string, string | undefined]>([
    ["Fairway's event", JSON.stringify({ target: 't', tenantId: 'acme', message: { body: 'x' } }), 'acme'],
    [
      'a task message (customData.tenantId)',
      readFileSync(fixturePath('taskmessage-document-tenant-workflow.json'), 'utf8'),
      'tenant1',
    ],
    [
      'no tenant: no group (SQS makes the message a tenant of its own)',
      JSON.stringify({ target: 't', message: { body: 'x' } }),
      undefined,
    ],
    ['an empty tenant is none', JSON.stringify({ target: 't', tenantId: '', message: { body: 'x' } }), undefined],
    ['not JSON', 'not json', undefined],
    [
      'punctuation SQS accepts',
      JSON.stringify({ target: 't', tenantId: "a.b-c_d:e@f~!'", message: { body: 'x' } }),
      "a.b-c_d:e@f~!'",
    ],
  ])('%s', (_name, body, expected) => {
    expect(messageGroupId(body)).toBe(expected);
  });

  it.each([
    ['a space', 'clinic b'],
    ['non-ASCII', 'klinik-ü'],
    ['over 128 characters', 'x'.repeat(129)],
  ])('a tenant with %s becomes its hash, one group per tenant', (_name, tenant) => {
    const body = JSON.stringify({ target: 't', tenantId: tenant, message: { body: 'x' } });
    expect(messageGroupId(body)).toBe(`sha256:${createHash('sha256').update(tenant).digest('hex')}`);
  });
});
