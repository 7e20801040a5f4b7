import { loadDistributorConfig } from '../../../lib/config/distributor';
import { loadRouterConfig } from '../../../lib/config/router';
import { ConfigError } from '../../../lib/errors';

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
