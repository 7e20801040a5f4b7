import type { AmqpSession } from '../../rabbitmq/connection';
import { channelAnswer } from '../../rabbitmq/connection';
import { brokerError, ReplyCode } from '../../rabbitmq/reply-codes';
import type { QueueDeleter } from './reaper';

/**
 * queue.delete with if-empty and if-unused on the session's shared plain channel. A refusal
 * (PRECONDITION_FAILED) closes that channel; the session opens another for the next call.
 */
export function amqpQueueDeleter(session: Pick<AmqpSession, 'sharedChannel'>): QueueDeleter {
  return {
    async deleteIfIdle(queue) {
      const what = `queue.delete of the staging queue ${JSON.stringify(queue)}`;
      try {
        const channel = await session.sharedChannel();
        await channelAnswer(channel, channel.deleteQueue(queue, { ifEmpty: true, ifUnused: true }), what);
        return 'deleted';
      } catch (cause) {
        const error = brokerError(`RabbitMQ did not delete the staging queue ${JSON.stringify(queue)}`, cause);
        if (error.replyCode === ReplyCode.PRECONDITION_FAILED) return 'in-use';
        throw error;
      }
    },
  };
}
