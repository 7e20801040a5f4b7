import { AmqpSession } from '../../../lib/rabbitmq/connection';
import { ManagementClient } from '../../../lib/rabbitmq/management';
import { DOORBELL_OPTIONS, doorbellName, openDoorbell, ringDoorbell } from '../../../lib/staging/doorbell';
import { MAX_QUEUE_NAME_BYTES } from '../../../lib/staging/staging-names';
import { createTestVhost, type TestVhost } from '../../harness/rabbit';

/** The target's doorbell (lib/staging/doorbell.ts) on a real broker: hints only, never a queue the router makes. */
describe("a target's doorbell (real RabbitMQ)", () => {
  let rabbit: TestVhost;
  let session: AmqpSession;
  beforeAll(async () => {
    rabbit = await createTestVhost();
    session = new AmqpSession(rabbit.amqpUrl);
  });
  afterAll(async () => {
    await session?.close();
    await rabbit?.delete();
  });

  it('a ring with no execution listening is dropped: no queue is made, nothing fails', async () => {
    const channel = await session.openConfirmChannel();
    ringDoorbell(channel, 'idle', 'idle»/t');
    await channel.waitForConfirms();
    await channel.close();
    const management = new ManagementClient(rabbit.managementUrl, rabbit.vhost);
    expect(await management.getQueue(doorbellName('idle')!)).toBeUndefined();
  });

  it("reads the target's own staging queues rung since the last read, once each, and ignores any other name", async () => {
    const bell = await openDoorbell(await session.openConfirmChannel(), 'scan');
    const router = await session.openConfirmChannel();
    for (const staging of ['scan»/a', 'scan»/a', 'mail»/b', 'scan', 'scanner»/c', 'scan»/b/ocr']) {
      ringDoorbell(router, 'scan', staging);
    }
    // Straight on the doorbell, as anyone allowed to publish could.
    router.sendToQueue(doorbellName('scan')!, Buffer.from('not a queue'));
    await router.waitForConfirms();
    await router.close();
    expect((await bell!.rung()).sort()).toEqual(['scan»/a', 'scan»/b/ocr']);
    expect(await bell!.rung()).toEqual([]);
    const info = await new ManagementClient(rabbit.managementUrl, rabbit.vhost).getQueue(doorbellName('scan')!);
    expect(info).toMatchObject({ type: 'classic', arguments: DOORBELL_OPTIONS.arguments });
    await bell!.close();
  });

  it('a target whose doorbell name would pass 255 bytes has none', async () => {
    const target = 'x'.repeat(MAX_QUEUE_NAME_BYTES - 5);
    expect(doorbellName(target)).toBeUndefined();
    const channel = await session.openConfirmChannel();
    expect(await openDoorbell(channel, target)).toBeUndefined();
    await channel.close();
  });
});
