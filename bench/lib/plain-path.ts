import type { ChannelModel, ConfirmChannel } from 'amqplib';
import { LambdaUsage } from './fleet-deployment';

/**
 * The plain path the fleet's costs are set beside: SQS → a Lambda that publishes each event's
 * message straight to its target with publisher confirms (one container, its channel kept warm),
 * through the same delay proxy. No tenants, no staging, no DynamoDB.
 */
export async function plainPath(model: ChannelModel) {
  const channel: ConfirmChannel = await model.createConfirmChannel();
  const usage = new LambdaUsage();
  return {
    usage,
    /** One invocation: an SQS batch of after-process event bodies. */
    route: (bodies: readonly string[]) =>
      usage.time('batch', async () => {
        for (const body of bodies) {
          const event = JSON.parse(body) as { target: string; message: { body: string; properties: object } };
          channel.sendToQueue(event.target, Buffer.from(event.message.body), {
            ...event.message.properties,
            persistent: true,
            mandatory: true,
          });
        }
        await channel.waitForConfirms();
      }),
    close: () => channel.close().catch(() => undefined),
  };
}
