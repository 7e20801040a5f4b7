import { loadRouterConfig } from '../../../lib/routing/config';
import { defaultRules } from '../../../lib/routing/priority/rules';
import { routerSettings } from '../../../lib/wiring/router';

const required = {
  AMQP_URL: 'amqp://u:p@h/v',
  RABBITMQ_VHOST: 'v',
  RABBITMQ_MANAGEMENT_URL: 'http://u:p@h:15672',
  TENANT_TABLE: 'counters',
};

describe('router configuration', () => {
  it('defaults to the seed: 1500 s, its threshold table, level 1 when quiet, AMQP priority 10 − level', () => {
    const config = loadRouterConfig(required);
    expect(routerSettings(config)).toEqual({
      targets: {},
      missingTenant: 'route',
      priorityRules: defaultRules,
      amqpPriorities: { 1: 9, 2: 8, 3: 7, 4: 6, 5: 5, 6: 4, 7: 3, 8: 2, 9: 1 },
      tenantTable: 'counters',
      stagingQueueCacheMs: 60_000,
      confirmTimeoutMs: 10_000,
      stagingPriorities: 'none',
      stagingTouchMs: 600_000,
      publisherUser: 'u',
    });
  });

  it('reads a configured interval, table, mapping and targets', () => {
    const config = loadRouterConfig({
      ...required,
      TENANT_PRIORITY_RESET_SECONDS: '60',
      TENANT_PRIORITY_THRESHOLDS: '[{"below":-100,"level":3},{"below":-10,"level":2}]',
      TENANT_PRIORITY_AMQP_PRIORITIES: '{"1":5,"2":3,"3":1}',
      ROUTER_TARGETS: '{"direct":{"bypassStaging":true},"q":{"arguments":{"x-max-priority":10}}}',
    });
    const settings = routerSettings(config);
    expect(settings.priorityRules).toEqual({
      resetIntervalMs: 60_000,
      thresholds: [
        { below: -100, level: 3 },
        { below: -10, level: 2 },
      ],
      quietLevel: 1,
    });
    expect(settings.amqpPriorities).toEqual({ 1: 5, 2: 3, 3: 1 });
    expect(settings.targets).toEqual({
      direct: { bypassStaging: true },
      q: { bypassStaging: false, arguments: { 'x-max-priority': 10 } },
    });
  });

  it.each([
    [
      'TENANT_PRIORITY_THRESHOLDS',
      '[{"below":-2,"level":2},{"below":-20,"level":9}]',
      /TENANT_PRIORITY_THRESHOLDS: must be in ascending order/,
    ],
    ['TENANT_PRIORITY_THRESHOLDS', 'not json', /TENANT_PRIORITY_THRESHOLDS: must be valid JSON/],
    [
      'TENANT_PRIORITY_THRESHOLDS',
      '[{"below":-50,"level":12}]',
      /TENANT_PRIORITY_AMQP_PRIORITIES: has no priority for level 12/,
    ],
    ['TENANT_PRIORITY_AMQP_PRIORITIES', '{"1":300}', /TENANT_PRIORITY_AMQP_PRIORITIES: /],
    ['TENANT_PRIORITY_RESET_SECONDS', '0', /TENANT_PRIORITY_RESET_SECONDS: must be at least 1/],
    ['ROUTER_TARGETS', '{"q":{"bypass":true}}', /ROUTER_TARGETS: /],
    // Issue 26 (RabbitMQ 4 gap b): 4.3 refuses the transient non-exclusive staging queues it would declare.
    [
      'ROUTER_TARGETS',
      '{"q":{"durable":false}}',
      /ROUTER_TARGETS: "durable" must be true or left out: RabbitMQ 4\.3 refuses transient/,
    ],
    ['ROUTER_STAGING_PRIORITIES', 'keep', /ROUTER_STAGING_PRIORITIES: must be one of none, copy/],
  ])('rejects a bad %s, naming it', (variable, value, message) => {
    expect(() => loadRouterConfig({ ...required, [variable]: value })).toThrow(message);
  });

  it.each([
    [{}, 'none', undefined],
    [{ ROUTER_STAGING_PRIORITIES: 'copy', STAGING_TABLE: 'staging' }, 'copy', 'staging'],
  ])('reads the staging settings (%j)', (env, priorities, table) => {
    const settings = routerSettings(loadRouterConfig({ ...required, ...env }));
    expect(settings.stagingPriorities).toBe(priorities);
    expect(settings.stagingTable).toBe(table);
  });
});
