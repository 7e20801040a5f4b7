import type { LengthLimits } from '../rabbitmq/queue-policies';

/**
 * Direct routing under a grant (docs/distributor.md "Direct routing under a grant"): the rules the
 * router and the distributor share, pure. An execution that holds a target's lease grants it on the
 * work board (`grant:<target>`, epoch ms until) when its pass left nothing staged; a router then
 * publishes straight to it while it is nearly empty; an execution revokes the grant and waits out
 * the routers' read and publish windows before its next pass measures the target.
 */

/** DIRECT_ROUTING…, translated once by each part's composition root. */
export interface DirectRoutingSettings {
  mode: 'off' | 'granted';
  /** The router publishes direct only while the target's ready depth and the batch's direct messages stay within this. */
  maxDepth: number;
  /** How long a grant lasts. */
  grantMs: number;
  /** A grant read longer ago than this is not used, and no direct publish starts later than its read + this. */
  readMs: number;
  /** A direct publish not confirmed within this fails its record. */
  publishMs: number;
}

/** After a revocation, how long until no router can still be publishing on a grant it read before it. */
export const revocationWaitMs = (settings: Pick<DirectRoutingSettings, 'readMs' | 'publishMs'>): number =>
  settings.readMs + settings.publishMs;

/**
 * Whether a router may decide now to publish direct on a grant `until` it read at `readAt`: the
 * read is fresh, and the grant outlasts a publish started as late as the read allows and confirmed
 * as late as the publish window allows (so an unrevoked grant that lapses needs no wait either).
 */
export function grantUsable(
  grant: { until: number | undefined; readAt: number },
  now: number,
  settings: Pick<DirectRoutingSettings, 'readMs' | 'publishMs'>,
): boolean {
  if (grant.until === undefined || !readFresh(grant.readAt, now, settings)) return false;
  return grant.until >= now + revocationWaitMs(settings);
}

/** Whether a grant read at `readAt` may still start a direct publish at `now`. */
export function readFresh(readAt: number, now: number, settings: Pick<DirectRoutingSettings, 'readMs'>): boolean {
  return now >= readAt && now - readAt <= settings.readMs;
}

/** What a target's pass tells the grant rule. */
export interface PassForGrant {
  outcome: string;
  /** Work left staged: the target's next pass is due. */
  dueInMs?: number;
  error?: string;
  /** The target's soft capacity: the max length the pass filled it to. */
  maxLength?: number;
  /** `grantable` of the target's limits and the pass's weights. */
  grantable?: boolean;
}

/**
 * Whether an execution grants the target after this pass: it ended normally with nothing left
 * staged, it is `grantable`, and the router's depth bound is below the target's soft capacity.
 */
export function mayGrant(pass: PassForGrant, settings: Pick<DirectRoutingSettings, 'mode' | 'maxDepth'>): boolean {
  if (settings.mode !== 'granted') return false;
  if (pass.outcome !== 'distributed' || pass.error !== undefined || pass.dueInMs !== undefined) return false;
  if (pass.grantable !== true) return false;
  return pass.maxLength !== undefined && settings.maxDepth < pass.maxLength;
}

/**
 * Whether a pass may grant the target at all: its limits keep every message, and the pass does not
 * withhold grants (a staging queue, one not yet seen included, may weigh 0: a paused tenant's
 * messages must stay staged, and its first queue on the target may not exist when the pass
 * measures it; or the controls could not be read).
 */
export function grantable(
  limits: Pick<LengthLimits, 'maxLength' | 'maxLengthBytes' | 'overflow'>,
  grantsWithheld: boolean,
): boolean {
  return limitsKeepEveryMessage(limits) && !grantsWithheld;
}

/**
 * Whether a target's effective limits keep every message published to it: none set, or overflow
 * `reject-publish` (the broker refuses the excess and the publisher retries). `drop-head` drops the
 * oldest and `reject-publish-dlx` dead-letters the refused one, which SQS would then deliver again.
 */
export function limitsKeepEveryMessage(
  limits: Pick<LengthLimits, 'maxLength' | 'maxLengthBytes' | 'overflow'>,
): boolean {
  if (limits.maxLength === undefined && limits.maxLengthBytes === undefined) return true;
  return limits.overflow === 'reject-publish';
}
