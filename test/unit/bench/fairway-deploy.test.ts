import { asDeployedDistributorEnv, distributorConfig } from '../../../bench/lib/fairway-deploy';
import { directRoutingOf } from '../../../lib/settings/common';
import { paramResolver } from '../../../local/service';

/** The flood and latency benches' stack, as stackEnv gives it (no service is reached: configurations only). */
const env = {
  AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672/bench',
  RABBITMQ_MANAGEMENT_URL: 'http://guest:guest@127.0.0.1:15672',
  RABBITMQ_VHOST: 'bench',
  DYNAMODB_ENDPOINT: 'http://127.0.0.1:4567',
  TENANT_TABLE: 'TenantCountersTable',
  DISTRIBUTOR_TABLE: 'DistributorStateTable',
};
const directRouting = paramResolver('dev')(`$\{param:directRouting}`);

describe("the bench stack's distributor", () => {
  it("gets serverless.yml's DIRECT_ROUTING with the bench's router count", () => {
    const config = distributorConfig(env, { env: {}, routers: 4 });
    expect(config.DIRECT_ROUTING).toBe(`${directRouting}:4`);
    expect(directRoutingOf(config)).toMatchObject({ mode: 'granted', routers: 4 });
  });

  it("keeps the bench's own DIRECT_ROUTING, and its other settings beside serverless.yml's", () => {
    expect(asDeployedDistributorEnv({ env: { DIRECT_ROUTING: 'off' }, routers: 4 })).toEqual({ DIRECT_ROUTING: 'off' });
    expect(asDeployedDistributorEnv({ env: { DISTRIBUTOR_MAX_EXECUTIONS: '1' }, routers: 2 })).toEqual({
      DIRECT_ROUTING: `${directRouting}:2`,
      DISTRIBUTOR_MAX_EXECUTIONS: '1',
    });
  });
});
