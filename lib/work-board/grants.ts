import type { LengthLimits } from '../rabbitmq/queue-policies';
import { type Board, liveGrant, revokedDueAt, type Served } from './work-board';

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
  /**
   * Router batches at once at most: the router function's reserved concurrency, which serverless.yml
   * gives the distributor in its DIRECT_ROUTING (`granted:<routers>`). Unknown: a target whose
   * length limit drops or dead-letters is never granted (directPublishesFit).
   */
  routers?: number;
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

/** What a target's pass tells the grant rule (its TargetSummary): how it ended, and the target's limits it measured. */
export interface PassForGrant {
  outcome: string;
  /** Work left staged: the target's next pass is due. */
  dueInMs?: number;
  error?: string;
  /**
   * The max length the target is filled to without a buffer or a tuned length. Not the buffer's
   * depth: at light load the buffer keeps a target a few messages deep (its drain × 250 ms), below
   * the direct depth, and a grant compared with it came only when a burst read a fast drain.
   */
  untunedMaxLength?: number;
  /** The target's effective broker limits (lib/rabbitmq/queue-policies.ts); `overflow` unknown: no grant. */
  lengthLimit?: number;
  maxLengthBytes?: number;
  overflow?: LengthLimits['overflow'];
  /**
   * The pass withholds grants: a staging queue, one not yet seen included, may weigh 0 (a paused
   * tenant's messages must stay staged, and its first queue on the target may not exist when the
   * pass measures it), or the controls could not be read. Unknown: no grant.
   */
  grantsWithheld?: boolean;
}

/**
 * Whether an execution grants the target after this pass: it ended normally with nothing left
 * staged, it does not withhold grants, no direct publish can make the target drop or refuse a
 * message (`directPublishesFit`), and the router's depth bound is below the target's max length.
 */
export function mayGrant(
  pass: PassForGrant,
  settings: Pick<DirectRoutingSettings, 'mode' | 'maxDepth' | 'routers'>,
): boolean {
  if (settings.mode !== 'granted') return false;
  if (pass.outcome !== 'distributed' || pass.error !== undefined || pass.dueInMs !== undefined) return false;
  if (pass.grantsWithheld !== false || pass.overflow === undefined) return false;
  const limits = { maxLength: pass.lengthLimit, maxLengthBytes: pass.maxLengthBytes, overflow: pass.overflow };
  if (!directPublishesFit(limits, settings)) return false;
  return pass.untunedMaxLength !== undefined && settings.maxDepth < pass.untunedMaxLength;
}

/**
 * Whether no direct publish can lose a message to the target's limits. None set, or overflow
 * `reject-publish` (the broker refuses the excess and SQS retries it): always. A count limit that
 * drops the oldest (`drop-head`) or dead-letters the refused one (`reject-publish-dlx`): only while
 * every router at once can add no more than it holds. `x-max-length` counts ready messages; a
 * router publishes direct only while its fresh ready-depth read plus its batch's direct messages
 * stay within `maxDepth`; a router container runs one batch at a time, and at most `routers` run at
 * once (the router function's reserved concurrency); while a target is granted no execution moves
 * into it. So the ready count never passes `routers` × `maxDepth` (docs/router.md "Direct routing"
 * proves it), and within the limit nothing is dropped. A byte limit is not bounded that way (a
 * message's size is the producer's): never. `routers` unknown: never.
 */
export function directPublishesFit(
  limits: Pick<LengthLimits, 'maxLength' | 'maxLengthBytes' | 'overflow'>,
  settings: Pick<DirectRoutingSettings, 'maxDepth' | 'routers'>,
): boolean {
  if (limits.maxLength === undefined && limits.maxLengthBytes === undefined) return true;
  if (limits.overflow === 'reject-publish') return true;
  if (limits.maxLengthBytes !== undefined || limits.maxLength === undefined || settings.routers === undefined) {
    return false;
  }
  return settings.routers * settings.maxDepth <= limits.maxLength;
}

/**
 * Direct routing in an execution's round (the rules above), its one seam: a due target
 * routers may be publishing to under a grant is revoked before the pass, each target served may be
 * granted, and one granted by another execution meanwhile is revoked in the same write.
 */
export function roundGrants(
  direct: DirectRoutingSettings,
  board: { revoke(targets: readonly string[], due: number): Promise<Board> },
  at: number,
) {
  const waitMs = revocationWaitMs(direct);
  return {
    /**
     * Revokes the grants of due targets: each is due again once no router can still be publishing
     * on it. Returns the board then, the targets to pass now and how many were revoked.
     */
    async revokeDue(
      seen: Board,
      due: readonly string[],
    ): Promise<{ board: Board; passing: string[]; revoked: number }> {
      const granted = due.filter((t) => liveGrant(seen, t, at) !== undefined);
      const passing = due.filter((t) => !granted.includes(t));
      if (granted.length === 0) return { board: seen, passing, revoked: 0 };
      return {
        board: await board.revoke(granted, revokedDueAt(seen, granted, at, waitMs)),
        passing,
        revoked: granted.length,
      };
    },
    /** What is written for a served target: its due time, and a grant until `grantUntil` if it may have one. */
    served(target: string, passed: PassForGrant | undefined, version: number, grantUntil: number): Served {
      if (passed?.outcome === 'granted') return { target, served: version, due: at + waitMs };
      const dueInMs = passed?.dueInMs;
      const grant = passed !== undefined && mayGrant(passed, direct) ? { grant: grantUntil, grantWait: waitMs } : {};
      return { target, served: version, ...(dueInMs === undefined ? {} : { due: at + dueInMs }), ...grant };
    },
    /** Grants the write kept: none where a request came in since the board was read. */
    kept: (written: readonly Served[], after: Board): number =>
      written.filter((w) => w.grant !== undefined && after.targets.get(w.target)?.grant === w.grant).length,
  };
}
