import { loadDistributorConfig } from '../../../lib/distributor/config';
import { loadRouterConfig } from '../../../lib/routing/config';
import { directRoutingOf } from '../../../lib/settings/common';

const rabbit = { AMQP_URL: 'amqp://h', RABBITMQ_MANAGEMENT_URL: 'http://h' };

describe('settings of passes on demand', () => {
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
    expect(config.tuning).toMatchObject({ followUpDelayMs: 1000, requestGraceMs: 10000 });
  });
});

describe('direct routing settings (both functions)', () => {
  const router = (extra: Record<string, string>) =>
    loadRouterConfig({ ...rabbit, TENANT_TABLE: 'c', DISTRIBUTOR_TABLE: 'd', ...extra });
  const distributor = (extra: Record<string, string>) =>
    loadDistributorConfig({ ...rabbit, DISTRIBUTOR_TABLE: 'd', ...extra });

  it('default to granted where the work board is known, with the windows of the design (fixed, the same in both)', () => {
    for (const config of [router({}), distributor({})]) {
      expect(directRoutingOf(config)).toEqual({
        mode: 'granted',
        maxDepth: 20,
        grantMs: 300_000,
        readMs: 1000,
        publishMs: 1000,
      });
    }
  });

  it('default to off for a router without the work board (nothing to read grants from)', () => {
    expect(directRoutingOf(loadRouterConfig({ ...rabbit, TENANT_TABLE: 'c' })).mode).toBe('off');
  });

  it.each<[string, { mode: string; routers?: number }]>([
    ['off', { mode: 'off' }],
    ['granted', { mode: 'granted' }],
    ['granted:10', { mode: 'granted', routers: 10 }],
    ['off:20', { mode: 'off', routers: 20 }],
  ])('read %s (serverless.yml gives the distributor the router concurrency after a colon)', (value, expected) => {
    const { mode, routers } = directRoutingOf(distributor({ DIRECT_ROUTING: value }));
    expect({ mode, ...(routers === undefined ? {} : { routers }) }).toEqual(expected);
  });

  it.each(['on', 'granted:', 'granted:0', 'granted:-1', 'granted:1.5', 'granted:ten', 'granted,10', 'GRANTED'])(
    'refuse %j in either function, naming the setting and what it takes',
    (value) => {
      const message = /DIRECT_ROUTING: must be off or granted, optionally followed by ":<routers>"/;
      expect(() => router({ DIRECT_ROUTING: value })).toThrow(message);
      expect(() => distributor({ DIRECT_ROUTING: value })).toThrow(message);
    },
  );

  it('refuse a granted router without the table its grants are on', () => {
    expect(() => loadRouterConfig({ ...rabbit, TENANT_TABLE: 'c', DIRECT_ROUTING: 'granted' })).toThrow(
      /DISTRIBUTOR_TABLE: is required with DIRECT_ROUTING=granted/,
    );
  });
});
