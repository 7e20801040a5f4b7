import { errorText } from '../../platform/errors';
import type { ChannelSlots } from './channel-slots';
import type { MoveRequest, MoveResult } from './move-request';
import { moveOn } from './mover';

/** What every mover of one target's shares has in common. */
export interface ShareMoves extends Omit<MoveRequest, 'source' | 'count' | 'prefetch'> {
  /** A mover's prefetch is its share, at most this. */
  maxPrefetch: number;
}

/**
 * Moves every share, one mover per slot at a time on the slot's channel pair, until all movers
 * ended; each mover's time goes to `learn`. A mover whose turn comes after the deadline does not
 * start: its queue keeps its messages for the next pass. Never rejects: a slot whose channels
 * could not be opened ends its share as `channel-closed`.
 */
export function moveShares(
  slots: ChannelSlots,
  shares: readonly { name: string; share: number; priority?: number }[],
  moves: ShareMoves,
  learn: (share: number, ms: number) => void,
  now: () => number,
): Promise<MoveResult[]> {
  const { maxPrefetch, ...request } = moves;
  const late: MoveResult = { moved: 0, requeued: 0, parked: 0, stopReason: 'deadline' };
  return Promise.all(
    shares.map(({ name, share, priority }) =>
      slots
        .use(async (pair) => {
          if (now() >= moves.deadline) return { value: late, reusable: true };
          const started = now();
          const prefetch = Math.min(share, maxPrefetch);
          const source = { source: name, count: share, prefetch, ...(priority === undefined ? {} : { priority }) };
          const moved = await moveOn(pair, { ...request, ...source }, now);
          learn(share, now() - started);
          return { value: moved.result, reusable: moved.reusable };
        })
        .catch((error: unknown): MoveResult => ({ ...late, stopReason: 'channel-closed', error: errorText(error) })),
    ),
  );
}
