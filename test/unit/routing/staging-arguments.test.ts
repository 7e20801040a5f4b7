import { stagingArguments } from '../../../lib/routing/staging-queues';

const overflow = { 'x-overflow': 'reject-publish' };

describe('stagingArguments: an allow-list of target arguments, and x-overflow reject-publish (priorities copied)', () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['priority kept', { 'x-max-priority': 10 }, { 'x-max-priority': 10, ...overflow }],
    [
      'what RabbitMQ 4.3 refuses dropped: queue mode, v1 storage, master locator',
      { 'x-max-priority': 10, 'x-queue-mode': 'lazy', 'x-queue-version': 1, 'x-queue-master-locator': 'min-masters' },
      { 'x-max-priority': 10, ...overflow },
    ],
    ['v2 storage kept', { 'x-queue-version': 2 }, { 'x-queue-version': 2, ...overflow }],
    [
      'quorum kept, its delivery limit dropped',
      { 'x-queue-type': 'quorum', 'x-delivery-limit': 5 },
      { 'x-queue-type': 'quorum', ...overflow },
    ],
    ['a stream target gets a classic staging queue', { 'x-queue-type': 'stream', 'x-max-age': '1D' }, overflow],
    [
      'TTL and dead-lettering dropped',
      { 'x-message-ttl': 1, 'x-dead-letter-exchange': 'dlx', 'x-dead-letter-strategy': 'at-least-once' },
      overflow,
    ],
    [
      'limits and expiry dropped',
      { 'x-max-length': 1, 'x-max-length-bytes': 1, 'x-overflow': 'drop-head', 'x-expires': 1 },
      overflow,
    ],
    ['an argument nobody knows yet dropped', { 'x-something-new': 1 }, overflow],
  ])('%s', (_, target, staging) => {
    expect(stagingArguments(target, 'copy')).toEqual(staging);
  });
});

// Issue 24, item 3: a copied x-max-priority made each staging queue cost the broker 5–6 times the memory.
describe('stagingArguments without ROUTER_STAGING_PRIORITIES=copy: no x-max-priority', () => {
  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['priority dropped', { 'x-max-priority': 10 }, overflow],
    [
      'the rest of the allow-list kept',
      { 'x-max-priority': 10, 'x-queue-type': 'classic', 'x-queue-version': 2 },
      { 'x-queue-type': 'classic', 'x-queue-version': 2, ...overflow },
    ],
    ['quorum without it', { 'x-queue-type': 'quorum', 'x-max-priority': 5 }, { 'x-queue-type': 'quorum', ...overflow }],
  ])('%s', (_, target, staging) => {
    expect(stagingArguments(target)).toEqual(staging);
    expect(stagingArguments(target, 'none')).toEqual(staging);
  });
});
