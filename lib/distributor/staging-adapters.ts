import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AmqpSession } from '../rabbitmq/connection';
import type { StagingRegistry } from '../staging/staging-registry';
import { DynamoStagingRegistry } from '../staging/staging-registry';
import type { ReapIdleStagingQueues } from './backstop';
import type { DistributorConfig } from './config';
import { backstopReaper } from './reaping/backstop-reaper';
import { amqpQueueDeleter } from './reaping/queue-deleter';
import type { DistributorReport } from './report';
import { DynamoLeaseStore } from './stores/lease-store';

/** The reaper's hold on a target: a reap of at most 100 queues, each a mark, a delete and a record delete. */
const REAPER_LEASE_MS = 60_000;

/**
 * The staging-queue registry the passes read (STAGING_TABLE) and the backstop's reaper over it; a
 * registry given instead (a bench's) is read alone and nothing is reaped. No STAGING_TABLE: passes
 * over named targets list the vhost, as before the registry.
 */
export function stagingAdapters(
  config: DistributorConfig,
  doc: DynamoDBDocumentClient,
  amqp: Pick<AmqpSession, 'sharedChannel'>,
  report: DistributorReport,
  given?: StagingRegistry,
): { registry?: StagingRegistry; reapIdleStagingQueues?: ReapIdleStagingQueues } {
  if (given) return { registry: given };
  if (!config.STAGING_TABLE) return {};
  const registry = new DynamoStagingRegistry(doc, config.STAGING_TABLE);
  return {
    registry,
    reapIdleStagingQueues: backstopReaper({
      registry,
      queues: amqpQueueDeleter(amqp),
      leases: new DynamoLeaseStore(doc, config.DISTRIBUTOR_TABLE),
      reapAfterMs: config.tuning.reapAfterMs,
      leaseMs: REAPER_LEASE_MS,
      report,
    }),
  };
}
