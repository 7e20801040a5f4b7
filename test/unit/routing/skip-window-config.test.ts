import { loadRouterConfig, skipWindowMsOf } from '../../../lib/routing/config';

const required = {
  AMQP_URL: 'amqp://u:p@h/v',
  RABBITMQ_VHOST: 'v',
  RABBITMQ_MANAGEMENT_URL: 'http://u:p@h:15672',
  TENANT_TABLE: 'counters',
};

const skipWindowMs = (env: Record<string, string>) => skipWindowMsOf(loadRouterConfig({ ...required, ...env }));

describe('the skip window of the tenant counters (derived from TENANT_PRIORITY_RESET_SECONDS)', () => {
  it.each<[string, Record<string, string>, number]>([
    ['60 s at the default interval', {}, 60_000],
    ['a 25th of a short interval', { TENANT_PRIORITY_RESET_SECONDS: '60' }, 2000],
    ['none below 25 s, where a 25th is under a second', { TENANT_PRIORITY_RESET_SECONDS: '24' }, 0],
    ['at most a minute, however long the interval', { TENANT_PRIORITY_RESET_SECONDS: '86400' }, 60_000],
  ])('%s', (_, env, ms) => {
    expect(skipWindowMs(env)).toBe(ms);
  });

  it.each([1, 10, 59, 600, 1500, 1501, 100_000])(
    'never passes a tenth of a %i s interval (a saturated tenant may reset that much early)',
    (seconds) => {
      expect(skipWindowMs({ TENANT_PRIORITY_RESET_SECONDS: String(seconds) }) * 10).toBeLessThanOrEqual(seconds * 1000);
    },
  );
});
