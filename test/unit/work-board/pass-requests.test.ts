import { loadDistributorConfig } from '../../../lib/distributor/config';
import { ConfigError } from '../../../lib/platform/errors';
import { loadRouterConfig } from '../../../lib/routing/config';

const rabbit = { AMQP_URL: 'amqp://h', RABBITMQ_MANAGEMENT_URL: 'http://h' };

describe('settings of passes on demand', () => {
  it('refuse a maximum follow-up delay below the base one, naming the setting', () => {
    const load = () =>
      loadDistributorConfig({
        ...rabbit,
        DISTRIBUTOR_TABLE: 't',
        DISTRIBUTOR_FOLLOW_UP_DELAY_MS: '5000',
        DISTRIBUTOR_FOLLOW_UP_MAX_DELAY_MS: '1000',
      });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/DISTRIBUTOR_FOLLOW_UP_MAX_DELAY_MS: must be at least DISTRIBUTOR_FOLLOW_UP_DELAY_MS/);
  });

  it('refuse a router that would ask for passes without the table to ask in', () => {
    const load = (extra: Record<string, string>) =>
      loadRouterConfig({
        ...rabbit,
        TENANT_TABLE: 'c',
        DISTRIBUTOR_FUNCTION_NAME: 'fairway-dev-distributor',
        ...extra,
      });
    expect(() => load({})).toThrow(/DISTRIBUTOR_TABLE: is required with DISTRIBUTOR_FUNCTION_NAME/);
    expect(load({ DISTRIBUTOR_TABLE: 'd' })).toMatchObject({ DISTRIBUTOR_TABLE: 'd' });
  });

  it('default to passes on the schedule alone', () => {
    const config = loadDistributorConfig({ ...rabbit, DISTRIBUTOR_TABLE: 't' });
    expect(config.DISTRIBUTOR_FUNCTION_NAME).toBeUndefined();
    expect(config).toMatchObject({ DISTRIBUTOR_FOLLOW_UP_DELAY_MS: 1000, DISTRIBUTOR_REQUEST_GRACE_MS: 10000 });
  });
});

describe('direct routing settings (both functions)', () => {
  const router = (extra: Record<string, string>) =>
    loadRouterConfig({ ...rabbit, TENANT_TABLE: 'c', DISTRIBUTOR_TABLE: 'd', ...extra });
  const distributor = (extra: Record<string, string>) =>
    loadDistributorConfig({ ...rabbit, DISTRIBUTOR_TABLE: 'd', ...extra });

  it('default to off, with the windows of the design', () => {
    for (const config of [router({}), distributor({})]) {
      expect(config).toMatchObject({
        DIRECT_ROUTING: 'off',
        DIRECT_ROUTING_MAX_DEPTH: 20,
        DIRECT_ROUTING_GRANT_SECONDS: 300,
        DIRECT_ROUTING_READ_MS: 1000,
        DIRECT_ROUTING_PUBLISH_MS: 1000,
      });
    }
  });

  it.each([
    [{ DIRECT_ROUTING: 'on' }, /DIRECT_ROUTING: must be one of off, granted/],
    [{ DIRECT_ROUTING_MAX_DEPTH: '0' }, /DIRECT_ROUTING_MAX_DEPTH: must be at least 1/],
    [{ DIRECT_ROUTING_MAX_DEPTH: 'many' }, /DIRECT_ROUTING_MAX_DEPTH: must be an integer/],
    [{ DIRECT_ROUTING_READ_MS: '5' }, /DIRECT_ROUTING_READ_MS: must be at least 10/],
    [{ DIRECT_ROUTING_PUBLISH_MS: '-1' }, /DIRECT_ROUTING_PUBLISH_MS: must be at least 10/],
    [
      { DIRECT_ROUTING_GRANT_SECONDS: '2' },
      /DIRECT_ROUTING_GRANT_SECONDS: must be longer than DIRECT_ROUTING_READ_MS \+ DIRECT_ROUTING_PUBLISH_MS \(2000 ms\)/,
    ],
  ])('refuse %j in either function, naming the setting', (extra, message) => {
    expect(() => router(extra)).toThrow(message);
    expect(() => distributor(extra)).toThrow(message);
  });

  it('refuse, with granted, windows the distributor would not wait out', () => {
    const windows = { DIRECT_ROUTING: 'granted', DIRECT_ROUTING_READ_MS: '4000', DIRECT_ROUTING_PUBLISH_MS: '3000' };
    expect(() => distributor(windows)).toThrow(/DIRECT_ROUTING_READ_MS: .*at most DISTRIBUTOR_WAIT_BOUND_MS \(6000\)/);
    expect(distributor({ ...windows, DISTRIBUTOR_WAIT_BOUND_MS: '7000' })).toMatchObject({ DIRECT_ROUTING: 'granted' });
  });

  it('refuse a granted router without the table its grants are on', () => {
    expect(() => loadRouterConfig({ ...rabbit, TENANT_TABLE: 'c', DIRECT_ROUTING: 'granted' })).toThrow(
      /DISTRIBUTOR_TABLE: is required with DIRECT_ROUTING=granted/,
    );
  });
});
