import type { DirectRoutingSettings } from '../work-board/grants';
import type { TenantPriorityRules } from './priority/rules';

/** How a target is handled; a shape given here wins over the management API. */
export interface TargetSettings {
  /** Publish straight to the target, with the tenant's priority, instead of to a staging queue. */
  bypassStaging: boolean;
  durable?: boolean;
  arguments?: Record<string, unknown>;
}

/** ROUTER_STAGING_PRIORITIES: whether staging queues copy their target's `x-max-priority`. */
export type StagingPriorities = 'none' | 'copy';

/** What the router does with a message that names no tenant: stage it by workflow alone, or reject it. */
export type MissingTenantPolicy = 'route' | 'reject';

/**
 * The router's settings, typed and named for the code that reads them. `service.ts` translates
 * them once, at cold start, from the environment's RouterConfig; nothing below it reads the environment.
 */
export interface RouterSettings {
  /** Per target queue: bypass staging, or the shape of its staging queues. */
  targets: Readonly<Record<string, TargetSettings>>;
  missingTenant: MissingTenantPolicy;
  /** SPEC §1's rules for the tenant counters. */
  priorityRules: TenantPriorityRules;
  /** Level → AMQP priority (RabbitMQ delivers a larger priority first). */
  amqpPriorities: Readonly<Record<string, number>>;
  /** The DynamoDB table of the tenant counters. */
  tenantTable: string;
  /** How long a declared staging queue, a target's shape and the vhost's policies are remembered. */
  stagingQueueCacheMs: number;
  /** How long to wait for the broker to confirm a batch's publishes. */
  confirmTimeoutMs: number;
  /** Whether staging queues copy their target's `x-max-priority` (default: they do not). */
  stagingPriorities?: StagingPriorities;
  /** The staging-queue registry's table (STAGING_TABLE); without one no record is kept, and nothing is reaped. */
  stagingTable?: string;
  /** How often, at most, a container touches a staging queue's record while it publishes to it. */
  stagingTouchMs?: number;
  /** The RabbitMQ user the router publishes as: the only `user-id` the broker accepts. */
  publisherUser: string;
  /** Direct routing under a grant (docs/router.md "Direct routing"); absent or `off`: every message is staged. */
  direct?: DirectRoutingSettings;
}
