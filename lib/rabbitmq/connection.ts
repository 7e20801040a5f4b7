import { type Channel, type ChannelModel, type ConfirmChannel, connect } from 'amqplib';
import { redactUrl } from '../platform/config';
import { BrokerError, BrokerTimeoutError } from '../platform/errors';
import { AMQP_BOUNDS } from '../platform/network-bounds';
import { brokerError } from './reply-codes';

/**
 * One AMQP connection per Lambda container, opened on first use. When the broker closes it
 * (restart, network loss), or leaves a channel open unanswered (a connection whose peer is gone
 * without a word, as after a failover), the next call opens a new one, so a warm container survives
 * a broker restart between invocations.
 */
export class AmqpSession {
  private current?: Promise<ChannelModel>;
  private model?: ChannelModel;
  private readonly shared = new ReusedChannel(() => this.openConfirmChannel());
  private readonly plain = new ReusedChannel(() => this.openChannel());

  constructor(
    private readonly url: string,
    private readonly connectTimeoutMs: number = AMQP_BOUNDS.connectTimeoutMs,
  ) {}

  connection(): Promise<ChannelModel> {
    if (this.model && isInDoubt(this.model)) this.forget(this.model);
    if (!this.current) {
      const opening = this.open();
      this.current = opening;
      opening.then(
        (model) => {
          if (this.current === opening) this.model = model;
        },
        () => {
          if (this.current === opening) this.current = undefined;
        },
      );
    }
    return this.current;
  }

  /** A new confirm channel on the live connection; the caller closes it when done. */
  async openConfirmChannel(): Promise<ConfirmChannel> {
    const model = await this.connection();
    let channel: ConfirmChannel;
    try {
      channel = await this.opened(model, model.createConfirmChannel());
    } catch (error) {
      throw brokerError('RabbitMQ did not open a confirm channel', error);
    }
    // Without a listener an 'error' event (e.g. 404 on a deleted queue) would crash the process;
    // the failing operation itself still rejects.
    channel.on('error', () => undefined);
    return channel;
  }

  /** A new plain channel (no confirms) on the live connection; the caller closes it when done. */
  async openChannel(): Promise<Channel> {
    const model = await this.connection();
    let channel: Channel;
    try {
      channel = await this.opened(model, model.createChannel());
    } catch (error) {
      throw brokerError('RabbitMQ did not open a channel', error);
    }
    channel.on('error', () => undefined); // the failing operation itself rejects
    return channel;
  }

  /**
   * The container's long-lived confirm channel, opened on first use and again after it (or its
   * connection) closed or was put in doubt, so a warm invocation saves a channel open and close.
   * Do not close it after use; close it only to discard a channel whose state is in doubt.
   */
  sharedConfirmChannel(): Promise<ConfirmChannel> {
    return this.shared.get();
  }

  /**
   * The container's long-lived plain channel (no confirms), for declares: opened on first use and
   * again after it closed (a refused declare closes it) or was put in doubt. Do not close it after use.
   */
  sharedChannel(): Promise<Channel> {
    return this.plain.get();
  }

  async close(): Promise<void> {
    const current = this.current;
    this.current = undefined;
    this.model = undefined;
    if (!current) return;
    const model = await current.catch(() => undefined);
    if (model) await closeWithin(model);
  }

  /**
   * The channel `opening` gives, within the operation bound. A broker that does not answer a
   * channel open is gone for this connection: it is put in doubt (the next call connects again),
   * and a channel it opens late is closed.
   */
  private opened<T extends Channel>(model: ChannelModel, opening: Promise<T>): Promise<T> {
    return answeredWithin(opening, 'channel.open', (late) => {
      late.then(closeWithin, () => undefined);
      putInDoubt(model);
      this.forget(model);
    });
  }

  private forget(model: ChannelModel): void {
    if (this.model !== model) return;
    this.current = undefined;
    this.model = undefined;
  }

  private async open(): Promise<ChannelModel> {
    try {
      // Nagle's algorithm off: with it, every channel close waited on a delayed ACK (a one-message
      // move took 49.5 ms with it, 4.2 ms without). The timeout bounds the TCP and TLS handshakes
      // and the AMQP open: amqplib gives up when the socket is silent that long.
      const model = await connect(this.url, { timeout: this.connectTimeoutMs, noDelay: true });
      const forget = () => this.forget(model);
      model.on('error', forget);
      model.on('close', forget);
      return model;
    } catch (error) {
      throw new BrokerError(`Cannot connect to RabbitMQ at ${redactUrl(this.url)}`, { cause: error });
    }
  }
}

/**
 * A channel opened on first use and reused, opened again once it closed or was put in doubt (an
 * operation on it went unanswered).
 */
class ReusedChannel<T extends Channel> {
  private opening?: Promise<T>;
  private channel?: T;

  constructor(private readonly open: () => Promise<T>) {}

  get(): Promise<T> {
    if (this.channel && isInDoubt(this.channel)) this.forget(this.opening);
    if (!this.opening) {
      const opening = this.open();
      this.opening = opening;
      opening.then(
        (channel) => {
          if (this.opening === opening) this.channel = channel;
          channel.once('close', () => this.forget(opening));
        },
        () => this.forget(opening),
      );
    }
    return this.opening;
  }

  private forget(opening: Promise<T> | undefined): void {
    if (this.opening !== opening) return;
    this.opening = undefined;
    this.channel = undefined;
  }
}

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

/** Channels and connections an operation was left unanswered on. */
const inDoubt = new WeakSet<object>();

/** Whether an operation on `target` (a channel or connection) was left unanswered: use another. */
export const isInDoubt = (target: object): boolean => inDoubt.has(target);

/**
 * Marks `target` in doubt and closes it in the background (bounded, never rejects). amqplib sends
 * a channel's RPCs one at a time: behind one the broker never answers, every later one would wait too.
 */
export function putInDoubt(target: Closable): void {
  inDoubt.add(target);
  void closeWithin(target);
}

/**
 * `operation`'s result, or a BrokerTimeoutError naming `what` when RabbitMQ has not answered it
 * within `ms` (amqplib waits for an answer forever). `unanswered` is then called with the operation,
 * which may still settle: the caller puts what it was sent on in doubt, and disposes of a late result.
 */
export async function answeredWithin<T>(
  operation: Promise<T>,
  what: string,
  unanswered: (late: Promise<T>) => void,
  ms: number = AMQP_BOUNDS.operationTimeoutMs,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      unanswered(operation);
      reject(new BrokerTimeoutError(`RabbitMQ did not answer ${what} within ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([operation, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `operation` on `channel` (a declare, a check, a consume…), answered within the operation bound;
 * when it is not, the channel is put in doubt.
 */
export function channelAnswer<T>(channel: Closable, operation: Promise<T>, what: string): Promise<T> {
  return answeredWithin(operation, what, () => putInDoubt(channel));
}
