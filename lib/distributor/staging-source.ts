import type { QueueInfo } from '../rabbitmq/management';
import type { QueuePolicies } from '../rabbitmq/queue-policies';
import type { StagingRegistry } from '../staging/staging-registry';
import type { TargetGroup } from './planning/tenant-backlog';

/**
 * Where a pass over named targets finds their staging queues and their own shape, without listing
 * the vhost (docs/distributor.md "Discovery"): the staging-queue registry, the management API's
 * single-queue GET of the target and its policies, all cached per container.
 */
export interface StagingSourceDeps {
  registry: Pick<StagingRegistry, 'queuesOf'>;
  /** The management API's GET of one queue (ManagementClient.getQueue). */
  getQueue: (name: string) => Promise<QueueInfo | undefined>;
  /** How long a target's registry read and its shape serve later passes of the container. */
  cacheMs: number;
  /** Read each staging queue's average message size too (shares fair by bytes), cached as the shapes are. */
  queueBytes?: boolean;
  now?: () => number;
}

/** A target's group, `version` = the work board's version read before the pass (see `groupOf`). */
export function stagingSource(deps: StagingSourceDeps): StagingSource {
  return new StagingSource(deps);
}

/** The staging source's caches, per container. */
export class StagingSource {
  private readonly queues = new Map<string, { names: string[]; until: number; version: number }>();
  private readonly shapes = new Map<string, { info: QueueInfo; until: number }>();
  private readonly sizes = new Map<string, { bytes: number; until: number }>();
  private listed: { read: QueuePolicies; until: number } | undefined;
  private readonly now: () => number;

  constructor(private readonly deps: StagingSourceDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** The vhost's policies, listed once per cache period (definitions an operator rarely changes). */
  async policies(list: () => Promise<QueuePolicies>): Promise<QueuePolicies> {
    if (this.listed && this.listed.until > this.now()) return this.listed.read;
    const read = await list();
    this.listed = { read, until: this.now() + this.deps.cacheMs };
    return read;
  }

  /** The target's group for a pass, or undefined when the registry names no staging queue for it. */
  async groupOf(
    target: string,
    policies: QueuePolicies,
    version: number,
    requestVersion: number | undefined,
  ): Promise<TargetGroup | undefined> {
    const staging = await this.stagingOf(target, version, requestVersion);
    if (staging.length === 0) return undefined;
    const [targetQueue, queueSizes] = await Promise.all([this.shapeOf(target, policies), this.sizesOf(staging)]);
    // The target's staged average is unknown without a listing: the movers' byte budget still holds the limit.
    return {
      target,
      ...(targetQueue ? { targetQueue } : {}),
      staging: [...staging].sort(),
      stagedMessageBytes: 0,
      ...(queueSizes ? { queueBytes: queueSizes } : {}),
    };
  }

  /**
   * The target's staging queues. A cached read stands only if it was taken at a board version at
   * least the target's latest request (`requestVersion`): a router records a new staging queue
   * before it publishes and asks, so a newer request may name a queue the cache has not seen.
   */
  private async stagingOf(target: string, version: number, requestVersion: number | undefined): Promise<string[]> {
    const cached = this.queues.get(target);
    if (cached && cached.until > this.now() && cached.version >= (requestVersion ?? Number.POSITIVE_INFINITY)) {
      return cached.names;
    }
    const names = (await this.deps.registry.queuesOf(target))
      .filter((r) => r.reapingAt === undefined)
      .map((r) => r.queue);
    this.queues.set(target, { names, until: this.now() + this.deps.cacheMs, version });
    return names;
  }

  /**
   * The target as the API shows it. Its arguments and type change rarely: cached. A target with a
   * byte limit is read each pass, since its held bytes (the listing's ~5 s lag at most) size its room.
   */
  private async shapeOf(target: string, policies: QueuePolicies): Promise<QueueInfo | undefined> {
    const cached = this.shapes.get(target);
    if (cached && cached.until > this.now() && !byteLimited(cached.info, policies)) return cached.info;
    const info = await this.deps.getQueue(target);
    // A missing target is not cached: the pass may create it.
    if (info) this.shapes.set(target, { info, until: this.now() + this.deps.cacheMs });
    else this.shapes.delete(target);
    return info;
  }

  /**
   * Each staging queue's average message body size as the API lists it, cached; a queue listed
   * empty or without bytes keeps its last size, or has none (the planner falls back).
   */
  private async sizesOf(staging: readonly string[]): Promise<Record<string, number> | undefined> {
    if (!this.deps.queueBytes) return undefined;
    const read = await Promise.all(staging.map((name) => this.sizeOf(name)));
    return Object.fromEntries(read.filter(([, bytes]) => bytes > 0));
  }

  private async sizeOf(name: string): Promise<readonly [string, number]> {
    const cached = this.sizes.get(name);
    if (cached && cached.until > this.now()) return [name, cached.bytes];
    const info = await this.deps.getQueue(name);
    const bytes = info && info.messages_ready > 0 ? (info.message_bytes_ready ?? 0) / info.messages_ready : 0;
    if (bytes > 0) this.sizes.set(name, { bytes, until: this.now() + this.deps.cacheMs });
    return [name, bytes > 0 ? bytes : (cached?.bytes ?? 0)];
  }
}

function byteLimited(info: QueueInfo, policies: QueuePolicies): boolean {
  if (info.arguments['x-max-length-bytes'] !== undefined) return true;
  return [...policies.policies, ...policies.operatorPolicies].some(
    (policy) => policy.definition['max-length-bytes'] !== undefined,
  );
}
