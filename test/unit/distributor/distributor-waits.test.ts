import { loadDistributorConfig } from '../../../lib/distributor/config';

const env = {
  AMQP_URL: 'amqp://localhost',
  RABBITMQ_MANAGEMENT_URL: 'http://localhost:15672',
  DISTRIBUTOR_TABLE: 'state',
};

describe('DISTRIBUTOR_WAIT_ALARM_SECONDS (the staging-wait bound)', () => {
  it('is 60 s unless set, and takes whole seconds up to a day', () => {
    expect(loadDistributorConfig(env).DISTRIBUTOR_WAIT_ALARM_SECONDS).toBe(60);
    expect(
      loadDistributorConfig({ ...env, DISTRIBUTOR_WAIT_ALARM_SECONDS: '300' }).DISTRIBUTOR_WAIT_ALARM_SECONDS,
    ).toBe(300);
  });

  it.each(['0', '-5', '1.5', 'soon', '86401'])('refuses %j at cold start, naming the setting', (value) => {
    expect(() => loadDistributorConfig({ ...env, DISTRIBUTOR_WAIT_ALARM_SECONDS: value })).toThrow(
      /DISTRIBUTOR_WAIT_ALARM_SECONDS/,
    );
  });
});
