/**
 * What RabbitMQ 4.3 refuses of the AMQP 0-9-1 calls a client makes (docs/distributor.md "RabbitMQ
 * versions"): the deprecated features 4.3 denies by default (`global_qos`, `transient_nonexcl_queues`,
 * `queue_master_locator`), the classic queue v1 storage it removed (`x-queue-mode`, `x-queue-version`
 * 1), classic mirroring (removed in 4.0), and the arguments a quorum queue has never taken.
 * Test-only: the RabbitMQ 4 audit (test/integration/tls/rabbitmq4-audit.test.ts) applies it to
 * every queue declare and qos call Fairway sends.
 */

/** A queue.declare or basic.qos as it goes on the wire (amqplib's field names). */
export type BrokerCall =
  | {
      method: 'queue.declare';
      queue: string;
      passive: boolean;
      durable: boolean;
      exclusive: boolean;
      autoDelete: boolean;
      arguments: Record<string, unknown>;
    }
  | { method: 'basic.qos'; prefetchCount: number; global: boolean };

/** Why RabbitMQ 4.3 would refuse `call`, one reason each; empty when it accepts it. */
export function refusedBy43(call: BrokerCall): string[] {
  if (call.method === 'basic.qos')
    return call.global ? ['global QoS (basic.qos with global=true): deprecated feature global_qos, denied in 4.3'] : [];
  // A passive declare only checks that the queue exists; its flags and arguments are ignored.
  if (call.passive) return [];
  const args = call.arguments;
  const reasons: string[] = [];
  if (!call.durable && !call.exclusive)
    reasons.push('a transient non-exclusive queue: deprecated feature transient_nonexcl_queues, denied in 4.3');
  if ('x-queue-mode' in args) reasons.push('x-queue-mode: classic queue v1 storage was removed in 4.3');
  if (Number(args['x-queue-version']) === 1)
    reasons.push('x-queue-version 1: classic queue v1 storage was removed in 4.3');
  if ('x-queue-master-locator' in args)
    reasons.push('x-queue-master-locator: deprecated feature queue_master_locator, denied in 4.3');
  for (const name of Object.keys(args).filter((name) => /^x-ha-|^ha-/.test(name)))
    reasons.push(`${name}: classic queue mirroring was removed in 4.0`);
  if (args['x-queue-type'] === 'quorum') {
    if (!call.durable || call.exclusive || call.autoDelete)
      reasons.push('a quorum queue must be durable, non-exclusive and not auto-delete');
    if ('x-max-priority' in args)
      reasons.push('x-max-priority on a quorum queue: not a quorum queue argument (3.13 to 4.3 refuse it)');
  }
  return reasons;
}
