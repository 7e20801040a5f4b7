import { AMQP_BOUNDS } from '../platform/network-bounds';

/** Something that closes asynchronously: an amqplib channel or connection (ChannelModel). */
export interface Closable {
  close(): Promise<unknown>;
}

/**
 * How long a close waits for the broker's close-ok. A broker half gone (a stalled socket, a node
 * going down) may never answer; a close must not hold an invocation for that.
 */
export const CLOSE_TIMEOUT_MS = AMQP_BOUNDS.closeTimeoutMs;

/**
 * Closes `closable`, waiting at most `ms` for the broker's answer. Never rejects: a channel the
 * broker already closed (a refusal) or a connection already lost has nothing left to close.
 * True when the close was answered in time.
 */
export async function closeWithin(closable: Closable, ms = CLOSE_TIMEOUT_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([
      closable.close().then(
        () => true,
        () => false,
      ),
      timedOut,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
