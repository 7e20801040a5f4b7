import { managementPath } from '../../../../lib/rabbitmq/api-path';
import { AmqpSession } from '../../../../lib/rabbitmq/connection';
import { parkingQueueName } from '../../../../lib/staging/side-queues';
import { uniqueName } from '../../../harness/services';
import { type DistributorFixture, distributorFixture } from '../fixture';

/**
 * Issue 12, item 1 (distributor): RabbitMQ refuses a publish whose `user-id` is not the
 * connection's user and closes the channel. A staging message carrying another user's id (the
 * router ran as another user) was put back and refused again on every pass: its queue never
 * drained. It is now parked in the target's parking queue, counted, and the queue moves on.
 */
describe('a staging message the broker refuses to take from the distributor (real RabbitMQ)', () => {
  let f: DistributorFixture;
  let session: AmqpSession;
  let amqpUrl: string;
  const user = uniqueName('mover');

  beforeAll(async () => {
    f = await distributorFixture();
    // The distributor runs as its own user; the staged messages carry the router's user, guest.
    await f.rabbit.api('PUT', managementPath('api', 'users', user), { password: 'mover-pw', tags: '' });
    await f.rabbit.api('PUT', managementPath('api', 'permissions', f.rabbit.vhost, user), {
      configure: '.*',
      write: '.*',
      read: '.*',
    });
    const url = new URL(f.rabbit.amqpUrl);
    url.username = user;
    url.password = 'mover-pw';
    amqpUrl = url.toString();
    session = new AmqpSession(amqpUrl);
  });
  afterAll(async () => {
    await session?.close();
    await f?.rabbit.api('DELETE', managementPath('api', 'users', user)).catch(() => undefined);
    await f?.close();
  });

  it('parks it with where it came from, moves the rest of the queue, and counts it', async () => {
    await f.declare('refusing', { 'x-max-priority': 10 });
    await f.declare('refusing»/t1');
    await f.publish('refusing»/t1', 2, 'before');
    await f.publish('refusing»/t1', 1, 'foreign', { userId: 'guest' });
    await f.publish('refusing»/t1', 2, 'after');
    await f.listed(['refusing»/t1']);

    const pass = () => f.distributor({ AMQP_URL: amqpUrl }, () => session.openConfirmChannel()).runPass(60_000);
    const first = await pass();
    const second = await pass();

    expect((await f.drain('refusing')).sort()).toEqual(['after-0', 'after-1', 'before-0', 'before-1']);
    expect(await f.depth('refusing»/t1')).toBe(0);
    const parked = await f.withChannel(async (channel) =>
      channel.get(parkingQueueName('refusing'), { noAck: true }).then((got) => got || undefined),
    );
    expect(parked?.content.toString()).toBe('foreign-0');
    expect(parked?.properties.userId).toBeUndefined();
    expect(parked?.properties.headers).toMatchObject({
      'x-fairway-parked-from': 'refusing»/t1',
      'x-fairway-parked-user-id': 'guest',
    });
    expect(first.parked + second.parked).toBe(1);
    expect(first.targets[0]!.queues[0]).toMatchObject({ name: 'refusing»/t1', parked: 1 });
  });
});
