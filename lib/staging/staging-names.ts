import { InvalidEventError } from '../platform/errors';
import { isDotSegment } from '../rabbitmq/management';

/**
 * Staging queue names (SPEC §2): `target»/tenant/workflow`, the reference implementation's
 * format (MessageRouter.LOAD_BALANCED_INDICATOR and its queue name mutators). The router builds
 * them; the distributor parses them back.
 */
export const STAGING_SEPARATOR = '»';
export const DISCRIMINATOR_SEPARATOR = '/';
/** RabbitMQ refuses longer queue names (a shortstr), counted in UTF-8 bytes. */
export const MAX_QUEUE_NAME_BYTES = 255;

/** What the mutators read: the target and the ids the event carried. */
export interface StagingKey {
  target: string;
  /** Absent for a tenant-less message (ROUTER_MISSING_TENANT=route): it is routed by its workflow alone. */
  tenantId?: string;
  workflowName?: string;
}

/**
 * One link of the name chain: returns the discriminator it adds, or undefined to add none.
 * `field` names the event field it reads, for errors. Extend the chain with your own.
 */
export interface QueueNameMutator<K extends StagingKey = StagingKey> {
  readonly field: string;
  discriminator(key: K): string | undefined;
}

// An empty id adds nothing, as upstream's mutators skip a null or empty one.
export const tenantMutator: QueueNameMutator = { field: 'tenantId', discriminator: (key) => key.tenantId || undefined };
export const workflowMutator: QueueNameMutator = {
  field: 'workflowName',
  discriminator: (key) => key.workflowName || undefined,
};
export const defaultMutators: readonly QueueNameMutator[] = [tenantMutator, workflowMutator];

/** Where a message goes: its staging queue, or its target when no mutator adds a discriminator. */
export interface StagingDestination {
  queue: string;
  /**
   * Set when the full name would pass RabbitMQ's 255 bytes: `discriminators-dropped` when trailing
   * discriminators (workflow first) were left out to fit, `target` when not even the first fits
   * and the message goes straight to its target, as upstream keeps the original name.
   */
  shortened?: 'discriminators-dropped' | 'target';
}

/**
 * The staging queue for `key`: target, `»`, then `/`+discriminator per mutator that adds one;
 * the target itself when none does. An id that would break the scheme is rejected, never
 * rewritten, so that a message cannot land in another tenant's queue. A name longer than
 * RabbitMQ allows drops discriminators from the end until it fits (a tenant keeps its own queue
 * when only its workflow was too long), else it is the target (`shortened` says which).
 */
export function stagingDestination<K extends StagingKey>(
  key: K,
  mutators: readonly QueueNameMutator<K>[] = defaultMutators,
): StagingDestination {
  checkTargetName(key.target);
  const used = mutators.flatMap((mutator) => {
    const value = mutator.discriminator(key);
    if (value === undefined) return [];
    checkDiscriminator(mutator.field, value);
    return [value];
  });
  if (used.length === 0) return { queue: key.target };
  if (key.target.startsWith('amq.')) {
    throw new InvalidEventError('target', 'names starting with "amq." are reserved by RabbitMQ and cannot be staged');
  }
  for (let kept = used.length; kept > 0; kept--) {
    const name =
      key.target +
      STAGING_SEPARATOR +
      used
        .slice(0, kept)
        .map((u) => DISCRIMINATOR_SEPARATOR + u)
        .join('');
    if (Buffer.byteLength(name, 'utf8') <= MAX_QUEUE_NAME_BYTES) {
      return kept === used.length ? { queue: name } : { queue: name, shortened: 'discriminators-dropped' };
    }
  }
  return { queue: key.target, shortened: 'target' };
}

/** The name `stagingDestination` gives `key`. */
export function stagingQueueName<K extends StagingKey>(
  key: K,
  mutators: readonly QueueNameMutator<K>[] = defaultMutators,
): string {
  return stagingDestination(key, mutators).queue;
}

/** A target queue name must be usable as is and must not look like a staging queue. */
export function checkTargetName(target: string, field = 'target'): void {
  if (target.length === 0) throw new InvalidEventError(field, 'must not be empty');
  if (isDotSegment(target)) {
    throw new InvalidEventError(field, 'must not be "." or ".." (the management API cannot address such a queue)');
  }
  if (target.includes(STAGING_SEPARATOR)) {
    throw new InvalidEventError(field, `must not contain "${STAGING_SEPARATOR}" (it would name a staging queue)`);
  }
  const bytes = Buffer.byteLength(target, 'utf8');
  if (bytes > MAX_QUEUE_NAME_BYTES) {
    throw new InvalidEventError(field, `is ${bytes} bytes; RabbitMQ allows at most ${MAX_QUEUE_NAME_BYTES}`);
  }
}

/** A tenant id, workflow name or other discriminator must be non-empty and free of the separators. */
export function checkDiscriminator(field: string, value: string): void {
  if (value.length === 0) throw new InvalidEventError(field, 'must not be empty');
  for (const reserved of [STAGING_SEPARATOR, DISCRIMINATOR_SEPARATOR]) {
    if (value.includes(reserved)) {
      throw new InvalidEventError(
        field,
        `must not contain "${reserved}" (it separates the parts of a staging queue name)`,
      );
    }
  }
}

export interface StagingQueueParts {
  target: string;
  tenant?: string;
  workflow?: string;
  /** Every discriminator in order (tenant, workflow, then any a longer chain added). */
  discriminators: string[];
}

/**
 * The inverse of `stagingQueueName`: undefined for a name that is not a staging queue (no `»`,
 * or nothing before it). Also reads the slash-less `target»tenant` of the reference's tests.
 */
export function parseStagingQueueName(name: string): StagingQueueParts | undefined {
  const at = name.indexOf(STAGING_SEPARATOR);
  if (at <= 0) return undefined;
  const target = name.slice(0, at);
  const rest = name.slice(at + STAGING_SEPARATOR.length);
  const path = rest.startsWith(DISCRIMINATOR_SEPARATOR) ? rest.slice(DISCRIMINATOR_SEPARATOR.length) : rest;
  const discriminators = path === '' ? [] : path.split(DISCRIMINATOR_SEPARATOR);
  const [tenant, workflow] = discriminators;
  return {
    target,
    ...(tenant ? { tenant } : {}),
    ...(workflow ? { workflow } : {}),
    discriminators,
  };
}

/**
 * Where the distributor parks a target's messages the broker would refuse to take from it. No
 * `»` in the name, so discovery never takes it for a staging queue and moves it back.
 */
export const parkingQueueName = (target: string) => `fairway-parked:${target}`;
