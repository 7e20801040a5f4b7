import { type DirectRoutingSettings, grantUsable } from '../work-board/grants';

/** A target's grant as a router read it: until when (none: no grant), and when the read was sent. */
export interface GrantRead {
  until: number | undefined;
  readAt: number;
}

/**
 * The batch's targets a router may publish direct to now (docs/router.md "Direct routing"): those
 * with a usable grant (lib/work-board/grants.ts), in the order given. Pure.
 */
export function grantedTargets(
  targets: readonly string[],
  grants: ReadonlyMap<string, GrantRead>,
  now: number,
  settings: Pick<DirectRoutingSettings, 'readMs' | 'publishMs'>,
): string[] {
  return targets.filter((target) => {
    const grant = grants.get(target);
    return grant !== undefined && grantUsable(grant, now, settings);
  });
}

/**
 * Which of the batch's staged messages (their targets, in batch order) go direct: for each granted
 * target whose ready depth is known, the first max(0, maxDepth − depth) of its messages; the rest,
 * and every message of a target without a depth (missing) or a grant, are staged. Pure.
 */
export function directChoice(
  itemTargets: readonly string[],
  depths: ReadonlyMap<string, number | undefined>,
  maxDepth: number,
): boolean[] {
  const room = new Map<string, number>();
  for (const [target, depth] of depths) if (depth !== undefined) room.set(target, Math.max(0, maxDepth - depth));
  return itemTargets.map((target) => {
    const left = room.get(target) ?? 0;
    if (left <= 0) return false;
    room.set(target, left - 1);
    return true;
  });
}
