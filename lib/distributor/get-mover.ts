import type { ConfirmChannel, GetMessage } from 'amqplib';
import { DRAIN_TIMEOUT_MS, type MoveRequest, type MoveResult, publishOptions, type StopReason } from './mover';

/**
 * Shares up to this many messages are taken one `basic.get` at a time: a get and a confirmed
 * publish are two round trips a message, where a consumer costs four before the first message
 * (prefetch, consume, confirm, cancel). Most staging queues of a busy target hold one or two.
 */
export const GET_SHARE_MAX = 2;

type Settled = { confirmed: true } | { confirmed: false; reason: StopReason; error?: string };

/**
 * Moves up to `count` messages with `basic.get` on `consumer`, one at a time, with the pump's
 * guarantees: each message is published to `target` (mandatory, every property kept) on the
 * confirm channel `publisher`, and acked in the staging queue only once the broker confirmed the
 * publish; a return, a nack or a closed publisher puts it back (nack with requeue). A confirm that
 * does not come leaves the message unacked for the caller to close the consumer, which puts it back.
 */
export async function moveByGet(
  consumer: ConfirmChannel,
  publisher: ConfirmChannel,
  request: MoveRequest,
  now: () => number,
): Promise<{ result: MoveResult; reusable: boolean }> {
  let moved = 0;
  let requeued = 0;
  const seen = { returned: false, closed: false };
  const onReturn = () => {
    seen.returned = true; // one publish in flight at a time: the return is its own
  };
  const onClose = () => {
    seen.closed = true;
  };
  publisher.on('return', onReturn);
  // Ahead of amqplib's own listener, which fails the pending confirm: the failure then finds it closed.
  publisher.prependListener('close', onClose);
  consumer.on('close', onClose);
  const ended = (stopReason: StopReason, reusable: boolean, extra: Partial<MoveResult> = {}) => {
    publisher.off('return', onReturn);
    publisher.off('close', onClose);
    consumer.off('close', onClose);
    return { result: { moved, requeued, stopReason, ...extra }, reusable: reusable && !seen.closed };
  };

  while (moved + requeued < request.count) {
    if (now() >= request.deadline) return ended('deadline', true);
    let message: GetMessage | false;
    try {
      message = await consumer.get(request.source, { noAck: false });
    } catch (error) {
      // A get on a missing queue closes the channel (404).
      return ended('source-missing', false, { error: (error as Error).message });
    }
    if (message === false) return ended('source-drained', true);
    seen.returned = false;
    const settled = await confirmOf(publisher, request, message, seen, now);
    if (settled === undefined) return ended('deadline', false, { unconfirmed: 1 });
    try {
      if (settled.confirmed) {
        consumer.ack(message);
        moved++;
      } else {
        consumer.nack(message, false, true);
        requeued++;
        return ended(settled.reason, false, settled.error ? { error: settled.error } : {});
      }
    } catch {
      // The consumer closed: the broker puts the unacked message back itself.
      return ended('channel-closed', false);
    }
  }
  return ended('share-moved', true);
}

/** Publishes one message and waits for its confirm; undefined when none came in time. */
function confirmOf(
  publisher: ConfirmChannel,
  request: MoveRequest,
  message: GetMessage,
  seen: { returned: boolean; closed: boolean },
  now: () => number,
): Promise<Settled | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), Math.max(0, request.deadline - now()) + DRAIN_TIMEOUT_MS);
    const settle = (settled: Settled) => {
      clearTimeout(timer);
      resolve(settled);
    };
    try {
      publisher.publish('', request.target, message.content, publishOptions(message.properties), (error) => {
        if (seen.closed) settle({ confirmed: false, reason: 'channel-closed' });
        else if (seen.returned) settle({ confirmed: false, reason: 'target-missing' });
        else if (error) settle({ confirmed: false, reason: 'target-rejected', error: String(error.message ?? error) });
        else settle({ confirmed: true });
      });
    } catch (error) {
      settle({ confirmed: false, reason: 'channel-closed', error: (error as Error).message });
    }
  });
}
