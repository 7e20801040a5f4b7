import { loadDistributorConfig } from '../../../lib/distributor/config';
import { loadRouterConfig } from '../../../lib/routing/config';
import { directRoutingOf } from '../../../lib/settings/common';
import { directPublishesFit } from '../../../lib/work-board/grants';
import { distributorDirectRouting, paramResolver } from '../../../local/service';
import { POLLER_CONCURRENCY } from '../../../local/sqs/settings';
import { functionEnvironment } from '../../../local/stack/environment';

const endpoints = {
  dynamoEndpoint: 'http://127.0.0.1:4567',
  amqpUrl: 'amqp://guest:guest@127.0.0.1:5672/fairway-demo-1',
  managementUrl: 'http://guest:guest@127.0.0.1:15672',
  vhost: 'fairway-demo-1',
  nxrgUrl: 'postgres://u:p@127.0.0.1:5433/nxrg',
  openxdsUrl: 'postgres://u:p@127.0.0.1:5434/openxds',
};

describe("the distributor's DIRECT_ROUTING as serverless.yml derives it", () => {
  it.each([
    ['dev', 4],
    ['prod', 1],
  ])(
    "is the %s stage's directRouting param with the caller's router count (%i), not the reserved concurrency",
    (stage, routers) => {
      const mode = paramResolver(stage)(`$\{param:directRouting}`);
      expect(distributorDirectRouting(stage, routers)).toBe(`${mode}:${routers}`);
    },
  );
});

describe("npm start's function environment", () => {
  const env = functionEnvironment(endpoints, { stage: 'dev', speed: 300, documentTypes: ['referral'] });

  it("gives the distributor serverless.yml's DIRECT_ROUTING with the local poller's router count", () => {
    expect(env.DIRECT_ROUTING).toBe(`${paramResolver('dev')(`$\{param:directRouting}`)}:${POLLER_CONCURRENCY}`);
    expect(directRoutingOf(loadDistributorConfig(env))).toMatchObject({ mode: 'granted', routers: POLLER_CONCURRENCY });
  });

  it('is read by the router, which shares it, as the mode alone', () => {
    expect(directRoutingOf(loadRouterConfig(env)).mode).toBe('granted');
  });

  it("lets the demo's target (x-max-length 60, drop-head) be granted: one router × the direct depth fits in it", () => {
    const settings = directRoutingOf(loadDistributorConfig(env));
    expect(directPublishesFit({ maxLength: 60, overflow: 'drop-head' }, settings)).toBe(true);
  });
});
