/** Separates a staging queue's target from its discriminators: `worker-input»/tenant1/workflow1`. */
export const STAGING_SEPARATOR = '»';

/**
 * The target of a staging queue (the part before the first `»`), or undefined for a queue that is
 * not a staging queue. Kept alone so the shared name parser of lib/routing can replace it.
 */
export function stagingTarget(queueName: string): string | undefined {
  const at = queueName.indexOf(STAGING_SEPARATOR);
  return at > 0 ? queueName.slice(0, at) : undefined;
}
