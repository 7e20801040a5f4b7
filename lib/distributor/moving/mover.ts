import type { ChannelPair } from './channel-pair';
import { GET_SHARE_MAX, moveByGet } from './get-mover';
import { type Moved, type MoveRequest, nothingMoved } from './move-request';
import { pump } from './pump';

/**
 * Moves one staging queue's share on channels the caller owns (a channel pair per concurrency slot
 * saves two opens and two closes per staging queue): a share of up to GET_SHARE_MAX with
 * `basic.get`, a larger one with a consumer. `reusable` is true only when the move left both
 * channels as it found them: open, the consumer cancelled, every delivery acked or put back, no
 * confirm owed. Otherwise the caller closes them, which puts back whatever is still unacked.
 */
export async function moveOn(pair: ChannelPair, request: MoveRequest, now: () => number = Date.now): Promise<Moved> {
  if (request.count <= 0) return { result: nothingMoved('share-moved'), reusable: true };
  if (request.count <= GET_SHARE_MAX) return moveByGet(pair, request, now);
  return pump(pair, request, now);
}
