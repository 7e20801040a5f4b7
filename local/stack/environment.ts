import { distributorDirectRouting } from '../service';
import { POLLER_CONCURRENCY } from '../sqs/settings';

/** Where the local stack's services listen. */
export interface LocalEndpoints {
  dynamoEndpoint: string;
  amqpUrl: string;
  managementUrl: string;
  vhost: string;
  nxrgUrl: string;
  openxdsUrl: string;
}

/** The demo's retention rules (NXRG_DOCUMENT_TYPES lists every type the demo registry holds). */
export const demoRetention = {
  referral: { retentionDays: 3650 },
  'lab-result': { retentionDays: 1825, basis: 'service' },
  'discharge-letter': { retentionDays: 5475 },
} as const;

export interface LocalStackSettings {
  /** The serverless.yml stage whose params the functions follow. */
  stage: string;
  /** Time-based settings are divided by it with the schedules. */
  speed: number;
  documentTypes: readonly string[];
  /** Passes on demand: the distributor's name and the local Lambda endpoint that runs it. */
  distributor?: { functionName: string; endpoint: string };
}

/**
 * The environment every function gets on AWS (serverless.yml's provider and function blocks),
 * pointed at the local services. Time-based settings are divided by `speed` with the schedules,
 * so that 25 minutes of silence still restore a tenant, in 25 sped-up minutes.
 */
export function functionEnvironment(
  endpoints: LocalEndpoints,
  { stage, speed, documentTypes, distributor }: LocalStackSettings,
): Record<string, string> {
  return {
    POWERTOOLS_SERVICE_NAME: 'fairway',
    POWERTOOLS_METRICS_NAMESPACE: 'Fairway',
    AWS_REGION: 'us-east-1',
    // Any credentials do for the embedded DynamoDB; real ones must never be picked up by accident.
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_SESSION_TOKEN: '',
    AWS_PROFILE: '',
    DYNAMODB_ENDPOINT: endpoints.dynamoEndpoint,
    TENANT_TABLE: 'TenantCountersTable',
    DISTRIBUTOR_TABLE: 'DistributorStateTable',
    CLEANUP_TABLE: 'CleanupStackTable',
    STAGING_TABLE: 'StagingQueuesTable',
    AMQP_URL: endpoints.amqpUrl,
    RABBITMQ_MANAGEMENT_URL: endpoints.managementUrl,
    RABBITMQ_VHOST: endpoints.vhost,
    TENANT_PRIORITY_RESET_SECONDS: String(Math.max(1, Math.round(1500 / speed))),
    // The distributor's value as serverless.yml derives it, with the router count the grant rule bounds
    // direct publishes by: here the poller's one invocation at a time, not the stage's reserved
    // concurrency (10 × the direct depth 20 would exceed the demo target's max length, and it would
    // never be granted). The router shares this environment and reads only the mode.
    DIRECT_ROUTING: distributorDirectRouting(stage, POLLER_CONCURRENCY),
    // Passes on demand, through the local Lambda endpoint (docs/distributor.md).
    ...(distributor
      ? { DISTRIBUTOR_FUNCTION_NAME: distributor.functionName, LAMBDA_ENDPOINT: distributor.endpoint }
      : {}),
    NXRG_DATABASE_URL: endpoints.nxrgUrl,
    OPENXDS_DATABASE_URL: endpoints.openxdsUrl,
    CLEANUP_DRY_RUN: 'false',
    NXRG_DOCUMENT_TYPES: documentTypes.join(','),
    CLEANUP_TIMEBASED_DOCUMENT_TYPES: JSON.stringify(demoRetention),
  };
}

/**
 * The variables that point the operator CLI at this local stack: every function's environment
 * (so `fairway invoke` of any function and `fairway queues` run as pasted), shell-quoted.
 */
export function operatorEnv(env: Record<string, string>): string {
  return Object.entries(env)
    .filter(([, value]) => value !== '')
    .map(([name, value]) => `${name}='${value.replaceAll("'", "'\\''")}'`)
    .join(' ');
}
