import { type DirectRoutingSettings, mayGrant, revocationWaitMs } from '../work-board/grants';
import { type Board, liveGrant, revokedDueAt, type Served } from '../work-board/work-board';
import type { DynamoWorkBoard } from '../work-board/work-board-store';
import type { TargetSummary } from './report';

/**
 * Direct routing in an execution's round (lib/work-board/grants.ts), its one seam: a due target
 * routers may be publishing to under a grant is revoked before the pass, each target served may be
 * granted, and one granted by another execution meanwhile is revoked in the same write.
 */
export function roundGrants(direct: DirectRoutingSettings, board: Pick<DynamoWorkBoard, 'revoke'>, at: number) {
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
    served(target: string, passed: TargetSummary | undefined, version: number, grantUntil: number): Served {
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
