import { ConfigError } from '../../../lib/platform/errors';
import { loadRouterConfig, skipWindowMsOf } from '../../../lib/routing/config';

const required = {
  AMQP_URL: 'amqp://u:p@h/v',
  RABBITMQ_VHOST: 'v',
  RABBITMQ_MANAGEMENT_URL: 'http://u:p@h:15672',
  TENANT_TABLE: 'counters',
};

describe('TENANT_PRIORITY_SKIP_WINDOW_SECONDS', () => {
  it.each<[string, Record<string, string>, number]>([
    ['unset: 60 s at the default interval', {}, 60_000],
    ['unset: a 25th of a short interval', { TENANT_PRIORITY_RESET_SECONDS: '60' }, 2000],
    ['empty is unset', { TENANT_PRIORITY_SKIP_WINDOW_SECONDS: '' }, 60_000],
    ['0 turns the skip off', { TENANT_PRIORITY_SKIP_WINDOW_SECONDS: '0' }, 0],
    ['a tenth of the interval at most', { TENANT_PRIORITY_SKIP_WINDOW_SECONDS: '150' }, 150_000],
  ])('%s', (_, env, ms) => {
    expect(skipWindowMsOf(loadRouterConfig({ ...required, ...env }))).toBe(ms);
  });

  it.each([
    [
      { TENANT_PRIORITY_SKIP_WINDOW_SECONDS: '151' },
      /SKIP_WINDOW_SECONDS: must be at most a tenth of TENANT_PRIORITY_RESET_SECONDS/,
    ],
    [
      { TENANT_PRIORITY_RESET_SECONDS: '60', TENANT_PRIORITY_SKIP_WINDOW_SECONDS: '7' },
      /SKIP_WINDOW_SECONDS: must be at most a tenth/,
    ],
    [{ TENANT_PRIORITY_SKIP_WINDOW_SECONDS: '-1' }, /SKIP_WINDOW_SECONDS: must be at least 0/],
    [{ TENANT_PRIORITY_SKIP_WINDOW_SECONDS: '1.5' }, /SKIP_WINDOW_SECONDS: must be an integer/],
    [{ TENANT_PRIORITY_SKIP_WINDOW_SECONDS: 'soon' }, /SKIP_WINDOW_SECONDS: must be an integer/],
  ])('refuses %j at cold start', (env, message) => {
    expect(() => loadRouterConfig({ ...required, ...env })).toThrow(ConfigError);
    expect(() => loadRouterConfig({ ...required, ...env })).toThrow(message);
  });
});
