import { MAX_EXPIRATION_MS, publishRefusals, userIdRefusal } from '../../../lib/rabbitmq/publish-refusals';
import { parseAfterProcessRecord } from '../../../lib/routing/event';

const refused = (properties: Parameters<typeof publishRefusals>[0]) =>
  publishRefusals(properties).map((r) => r.property);

describe('publishRefusals: what RabbitMQ refuses at basic.publish', () => {
  it.each([
    ['0', []],
    ['000000000000000000000000005', []],
    [String(MAX_EXPIRATION_MS), []],
    ['0315360000000', []],
    ['315360000001', ['expiration']],
    ['0315360000001', ['expiration']],
    ['9223372036854775808', ['expiration']],
    ['-1', ['expiration']],
    ['+5', ['expiration']],
    ['', ['expiration']],
    ['1.5', ['expiration']],
    [' 5', ['expiration']],
  ])('expiration %j', (expiration, expected) => {
    expect(refused({ expiration })).toEqual(expected);
  });

  it('a delivery mode other than 1 or 2', () => {
    expect(refused({ deliveryMode: 1 })).toEqual([]);
    expect(refused({ deliveryMode: 2 })).toEqual([]);
    expect(refused({ deliveryMode: 0 })).toEqual(['deliveryMode']);
    expect(refused({ deliveryMode: 3 })).toEqual(['deliveryMode']);
  });

  it('the direct reply-to pseudo-queue as reply-to, but not a reply-to address under it', () => {
    expect(refused({ replyTo: 'amq.rabbitmq.reply-to' })).toEqual(['replyTo']);
    expect(refused({ replyTo: 'amq.rabbitmq.reply-to.g1h2AA==' })).toEqual([]);
  });

  it('CC and BCC headers of any value; other headers, also lower-case cc, are fine', () => {
    expect(refused({ headers: { CC: ['q'], BCC: 'q', cc: 'x', 'x-any': 1 } })).toEqual(['headers.CC', 'headers.BCC']);
    expect(refused({ headers: { CC: undefined } })).toEqual([]);
  });

  it('a user-id other than the connection user', () => {
    expect(userIdRefusal(undefined, 'guest')).toBeUndefined();
    expect(userIdRefusal('guest', 'guest')).toBeUndefined();
    expect(userIdRefusal('other', 'guest')).toMatchObject({ property: 'userId' });
  });
});

describe('the router event schema applies them once per field', () => {
  const reasons = (properties: object) => {
    try {
      parseAfterProcessRecord({
        body: JSON.stringify({ target: 'q', tenantId: 't', message: { body: 'b', properties } }),
        messageAttributes: {},
      });
      return [];
    } catch (error) {
      return (error as { problems: { field: string }[] }).problems.map((p) => p.field);
    }
  };

  it.each([
    [{ deliveryMode: 3 }, ['message.properties.deliveryMode']],
    [{ expiration: '9223372036854775808' }, ['message.properties.expiration']],
    [{ expiration: 'soon' }, ['message.properties.expiration']],
    [{ headers: { BCC: ['q'] } }, ['message.properties.headers.BCC']],
    [{ replyTo: 'amq.rabbitmq.reply-to' }, ['message.properties.replyTo']],
  ])('%j', (properties, fields) => {
    expect(reasons(properties)).toEqual(fields);
  });
});
