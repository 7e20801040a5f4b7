/**
 * Which staging deliveries a mover may ack, and with one `multiple` ack for many: an ack frame per
 * message is broker work a mover of thousands can spare (acking in bulk moved ~20 % more messages
 * a second in the bench's raw pump). Pure: the mover sends the frames.
 *
 * A `multiple` ack of tag N acks every delivery up to N still unacked on the channel, so N is
 * handed out only once every tag up to it is settled: confirmed (to ack) or already nacked. A tag
 * whose confirm has not come holds back every tag above it; N itself is always a confirmed tag
 * (RabbitMQ closes the channel on a `multiple` ack of a tag it no longer holds).
 */
export interface AckLedger<T> {
  /** A delivery taken, in delivery order: the first one fixes where the mover's tags start. */
  delivered(tag: number): void;
  /** The broker confirmed the publish of `tag`: `value` (its message) is to be acked. */
  confirmed(tag: number, value: T): void;
  /** `tag` was nacked (put back) already: it is settled, with nothing to ack. */
  nacked(tag: number): void;
  /** The message to ack with `multiple` now, if the settled run grew over a confirmed tag since the last call. */
  take(): T | undefined;
  /** Confirmed messages that a tag still unsettled holds back (the mover stops waiting): ack them one by one. */
  heldBack(): T[];
}

/**
 * A ledger for one consumer on a channel that no one else consumes or gets from while it runs,
 * every earlier delivery of the channel settled: its delivery tags then run on without a gap.
 */
export function ackLedger<T>(): AckLedger<T> {
  /** Every tag up to here is settled and acked or nacked on the wire, or handed out by take. */
  let settledUpTo: number | undefined;
  const settled = new Map<number, T | undefined>();
  return {
    delivered(tag) {
      settledUpTo ??= tag - 1;
    },
    confirmed(tag, value) {
      settled.set(tag, value);
    },
    nacked(tag) {
      settled.set(tag, undefined);
    },
    take() {
      if (settledUpTo === undefined) return undefined;
      let toAck: T | undefined;
      while (settled.has(settledUpTo + 1)) {
        settledUpTo++;
        toAck = settled.get(settledUpTo) ?? toAck;
        settled.delete(settledUpTo);
      }
      return toAck;
    },
    heldBack() {
      const held = [...settled.values()].filter((value) => value !== undefined);
      settled.clear();
      return held;
    },
  };
}
