import { closeChannelPair, type OpenChannel, openChannelPair } from '../../lib/distributor/moving/channels';
import { type MoveRequest, type MoveResult, nothingMoved } from '../../lib/distributor/moving/move-request';
import { moveOn } from '../../lib/distributor/moving/mover';
import { errorText } from '../../lib/platform/errors';

/** One move on a channel pair of its own, opened and closed around it (a pass keeps pairs per slot instead). */
export async function moveMessages(
  openChannel: OpenChannel,
  request: MoveRequest,
  now: () => number = Date.now,
): Promise<MoveResult> {
  if (request.count <= 0) return nothingMoved('share-moved');
  let pair: Awaited<ReturnType<typeof openChannelPair>> | undefined;
  try {
    pair = await openChannelPair(openChannel);
    return (await moveOn(pair, request, now)).result;
  } catch (error) {
    return nothingMoved('channel-closed', errorText(error));
  } finally {
    if (pair) await closeChannelPair(pair);
  }
}

/** The moving tests' request: a 30 s deadline, a 2 s idle stop (300 ms stopped a move early on a loaded machine), prefetch 100, as `guest`; each can be overridden. */
export const testMoveRequest = (
  request: Partial<MoveRequest> & Pick<MoveRequest, 'source' | 'target' | 'count'>,
): MoveRequest => ({
  prefetch: 100,
  deadline: Date.now() + 30_000,
  idleStopMs: 2_000,
  publisherUser: 'guest',
  ...request,
});

/** The moving tests' one move (testMoveRequest) on a channel pair of its own. */
export const testMove = (
  openChannel: OpenChannel,
  request: Parameters<typeof testMoveRequest>[0],
): Promise<MoveResult> => moveMessages(openChannel, testMoveRequest(request));
