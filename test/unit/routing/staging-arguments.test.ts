import { stagingArguments } from '../../../lib/routing/staging-queues';

const overflow = { 'x-overflow': 'reject-publish' };
const classic = { 'x-queue-type': 'classic', ...overflow };

describe('stagingArguments: an allow-list of target arguments, and x-overflow reject-publish (priorities copied)', () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['priority kept', { 'x-max-priority': 10 }, { 'x-max-priority': 10, ...classic }],
    [
      'what RabbitMQ 4.3 refuses dropped: queue mode, v1 storage, master locator',
      { 'x-max-priority': 10, 'x-queue-mode': 'lazy', 'x-queue-version': 1, 'x-queue-master-locator': 'min-masters' },
      { 'x-max-priority': 10, ...classic },
    ],
    ['v2 storage kept', { 'x-queue-version': 2 }, { 'x-queue-version': 2, ...classic }],
    ['a stream target gets a classic staging queue', { 'x-queue-type': 'stream', 'x-max-age': '1D' }, classic],
    [
      'TTL and dead-lettering dropped',
      { 'x-message-ttl': 1, 'x-dead-letter-exchange': 'dlx', 'x-dead-letter-strategy': 'at-least-once' },
      classic,
    ],
    [
      'limits and expiry dropped',
      { 'x-max-length': 1, 'x-max-length-bytes': 1, 'x-overflow': 'drop-head', 'x-expires': 1 },
      classic,
    ],
    ['an argument nobody knows yet dropped', { 'x-something-new': 1 }, classic],
  ])('%s', (_, target, staging) => {
    expect(stagingArguments(target, 'copy')).toEqual(staging);
  });
});

// Issue 24, item 3: a copied x-max-priority made each staging queue cost the broker 5–6 times the memory.
describe('stagingArguments without ROUTER_STAGING_PRIORITIES=copy: no x-max-priority', () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['priority dropped', { 'x-max-priority': 10 }, classic],
    [
      'the rest of the allow-list kept',
      { 'x-max-priority': 10, 'x-queue-type': 'classic', 'x-queue-version': 2 },
      { 'x-queue-version': 2, ...classic },
    ],
  ])('%s', (_, target, staging) => {
    expect(stagingArguments(target)).toEqual(staging);
    expect(stagingArguments(target, 'none')).toEqual(staging);
  });
});

// Issue 36, item 5: quorum staging queues cannot be reaped (RabbitMQ refuses a conditional delete of
// a quorum queue), so on a vhost whose targets are quorum their number grew with every tenant.
describe('stagingArguments: classic, said so, unless ROUTER_TARGETS keeps quorum', () => {
  const quorumTarget = {
    'x-queue-type': 'quorum',
    'x-delivery-limit': 5,
    'x-queue-leader-locator': 'balanced',
    'x-quorum-initial-group-size': 3,
  };

  it("a quorum target's staging queue is classic, without the quorum-only arguments a classic queue refuses", () => {
    expect(stagingArguments(quorumTarget)).toEqual(classic);
    expect(stagingArguments(quorumTarget, 'copy')).toEqual(classic);
  });

  it('a target without x-queue-type gets x-queue-type classic: a vhost whose default type is quorum would make it quorum', () => {
    expect(stagingArguments({})).toEqual(classic);
  });

  it('a quorum shape given in ROUTER_TARGETS is kept, with its quorum arguments and without x-max-priority', () => {
    expect(stagingArguments({ ...quorumTarget, 'x-max-priority': 5 }, 'copy', true)).toEqual({
      'x-queue-type': 'quorum',
      'x-queue-leader-locator': 'balanced',
      'x-quorum-initial-group-size': 3,
      ...overflow,
    });
    expect(stagingArguments({ 'x-max-priority': 5 }, 'copy', true)).toEqual({ 'x-max-priority': 5, ...classic });
  });
});
