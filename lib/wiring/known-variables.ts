/**
 * Every variable a Fairway function reads: the keys of every part's schema, listed as data so the
 * cold-start check of variable names (variables.ts) pulls no part's settings into another part's
 * bundle (the distributor's would hold the cleanup jobs' otherwise). test/unit/wiring/variables.test.ts
 * checks the list against the schemas: a setting added or removed there fails it until listed here.
 */
export const knownVariables: readonly string[] = [
  // the router (lib/routing/config.ts) and what it shares
  'AWS_REGION',
  'DYNAMODB_ENDPOINT',
  'AMQP_URL',
  'RABBITMQ_MANAGEMENT_URL',
  'RABBITMQ_VHOST',
  'RABBITMQ_SECRET_ARN',
  'DISTRIBUTOR_FUNCTION_NAME',
  'LAMBDA_ENDPOINT',
  'STAGING_TABLE',
  'DIRECT_ROUTING',
  'TENANT_TABLE',
  'DISTRIBUTOR_TABLE',
  'TENANT_PRIORITY_RESET_SECONDS',
  'TENANT_PRIORITY_THRESHOLDS',
  'TENANT_PRIORITY_QUIET_LEVEL',
  'TENANT_PRIORITY_AMQP_PRIORITIES',
  'ROUTER_TARGETS',
  'ROUTER_MISSING_TENANT',
  'ROUTER_STAGING_PRIORITIES',
  // the distributor (lib/distributor/config.ts)
  'DISTRIBUTOR_PLANNER',
  'DISTRIBUTOR_FAIR_BY',
  'DISTRIBUTOR_MOVE_PRIORITY',
  'DISTRIBUTOR_DEFAULT_MAX_LENGTH',
  'DISTRIBUTOR_BUFFER_HORIZON_MS',
  'DISTRIBUTOR_TARGETS',
  'DISTRIBUTOR_WEIGHTS',
  'DISTRIBUTOR_MISSING_TARGET',
  'DISTRIBUTOR_NEW_TARGET_ARGUMENTS',
  'DISTRIBUTOR_MAX_EXECUTIONS',
  // the cleanup jobs (lib/cleanup/config.ts, lib/cleanup/jobs/config.ts)
  'NXRG_DATABASE_URL',
  'NXRG_DATABASE_SECRET_ARN',
  'OPENXDS_DATABASE_URL',
  'OPENXDS_DATABASE_SECRET_ARN',
  'CLEANUP_TABLE',
  'CLEANUP_DRY_RUN',
  'CLEANUP_FUNCTION_TIMEOUT_SECONDS',
  'NXRG_NAMES',
  'NXRG_DOCUMENT_TYPES',
  'CLEANUP_TIMEBASED_DOCUMENT_TYPES',
  'OPENXDS_NAMES',
];
