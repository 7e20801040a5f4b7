import { type BrokerCall, refusedBy43 } from '../../harness/rabbitmq-4-rules';

const declare = (flags: Partial<Extract<BrokerCall, { method: 'queue.declare' }>> = {}): BrokerCall => ({
  method: 'queue.declare',
  queue: 'q',
  passive: false,
  durable: true,
  exclusive: false,
  autoDelete: false,
  arguments: {},
  ...flags,
});

// The rules the RabbitMQ 4 audit applies: each refusal of 4.3 is named, and what 4.3 accepts passes.
describe('what RabbitMQ 4.3 refuses', () => {
  it.each<[string, BrokerCall]>([
    ['a durable classic queue with priorities', declare({ arguments: { 'x-max-priority': 10 } })],
    ['a durable quorum queue', declare({ arguments: { 'x-queue-type': 'quorum', 'x-quorum-initial-group-size': 3 } })],
    ['a transient exclusive queue', declare({ durable: false, exclusive: true })],
    ['x-queue-version 2', declare({ arguments: { 'x-queue-version': 2 } })],
    ['x-queue-leader-locator', declare({ arguments: { 'x-queue-leader-locator': 'balanced' } })],
    ['a passive declare, whatever its flags', declare({ passive: true, durable: false })],
    ['a per-consumer prefetch', { method: 'basic.qos', prefetchCount: 50, global: false }],
  ])('accepts %s', (_label, call) => {
    expect(refusedBy43(call)).toEqual([]);
  });

  it.each<[string, BrokerCall, RegExp]>([
    ['global QoS', { method: 'basic.qos', prefetchCount: 50, global: true }, /global_qos/],
    ['a transient non-exclusive queue', declare({ durable: false }), /transient_nonexcl_queues/],
    ['x-queue-mode lazy', declare({ arguments: { 'x-queue-mode': 'lazy' } }), /x-queue-mode/],
    ['x-queue-mode default', declare({ arguments: { 'x-queue-mode': 'default' } }), /x-queue-mode/],
    ['x-queue-version 1', declare({ arguments: { 'x-queue-version': 1 } }), /x-queue-version 1/],
    [
      'x-queue-master-locator',
      declare({ arguments: { 'x-queue-master-locator': 'min-masters' } }),
      /queue_master_locator/,
    ],
    ['a mirroring argument', declare({ arguments: { 'x-ha-policy': 'all' } }), /mirroring/],
    [
      'a non-durable quorum queue',
      declare({ durable: false, exclusive: true, arguments: { 'x-queue-type': 'quorum' } }),
      /quorum queue must be durable/,
    ],
    [
      'x-max-priority on a quorum queue',
      declare({ arguments: { 'x-queue-type': 'quorum', 'x-max-priority': 5 } }),
      /x-max-priority on a quorum queue/,
    ],
  ])('refuses %s, naming why', (_label, call, reason) => {
    const reasons = refusedBy43(call);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(reason);
  });
});
