import { readFileSync } from 'node:fs';
import type { ConfirmChannel } from 'amqplib';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { fixturePath } from '../../fixtures';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';
import { eventually } from '../../harness/eventually';
import { type LambdaRun, lambdaNode } from '../../harness/lambda-node';
import { tlsServices } from '../../harness/services';
import { createTlsVhost, type TlsVhost } from '../../harness/tls';

/** Shared by the TLS tests: a vhost on the TLS node, dynalite, and Fairway's functions in Lambda-like processes. */

const sample = (JSON.parse(readFileSync(fixturePath('sqs-event.json'), 'utf8')) as SQSEvent).Records[0]!;

/** An SQS event of after-process events, one record each: `[target, tenantId, body]`. */
export const afterProcessEvent = (records: [target: string, tenantId: string, body: string][]): SQSEvent => ({
  Records: records.map(
    ([target, tenantId, body], i): SQSRecord => ({
      ...sample,
      messageId: `tls-${i}`,
      body: JSON.stringify({ target, tenantId, message: { body } }),
    }),
  ),
});

export interface TlsBroker {
  rabbit: TlsVhost;
  dynamo: EmbeddedDynamo;
  /** The environment of the router and the distributor on this vhost, over AMQPS and HTTPS, trusting `caFile`. */
  env(caFile?: string): Record<string, string>;
  run(name: 'router' | 'distributor', env: Record<string, string>, events?: unknown[]): Promise<LambdaRun>;
  declare(queue: string, args?: Record<string, unknown>): Promise<void>;
  publish(queue: string, bodies: string[]): Promise<void>;
  /** Takes every ready message off `queue` (over AMQPS) and returns their bodies. */
  drain(queue: string): Promise<string[]>;
  /** Waits until the management listing shows each queue with ready messages (stats lag ~5 s). */
  listed(queues: string[]): Promise<void>;
  close(): Promise<void>;
}

export async function tlsBroker(): Promise<TlsBroker> {
  const [rabbit, dynamo] = await Promise.all([createTlsVhost(), startDynamo()]);
  await dynamo.createTables();
  const lambda = lambdaNode();
  const withChannel = async <T>(use: (channel: ConfirmChannel) => Promise<T>) => {
    const connection = await rabbit.connect();
    try {
      return await use(await connection.createConfirmChannel());
    } finally {
      await connection.close();
    }
  };
  return {
    rabbit,
    dynamo,
    env: (caFile = tlsServices.caFile) => ({
      NODE_EXTRA_CA_CERTS: caFile,
      AMQP_URL: rabbit.amqpsUrl,
      RABBITMQ_MANAGEMENT_URL: rabbit.managementUrl,
      RABBITMQ_VHOST: rabbit.vhost,
      DYNAMODB_ENDPOINT: dynamo.endpoint,
      TENANT_TABLE: 'TenantCountersTable',
      DISTRIBUTOR_TABLE: 'DistributorStateTable',
    }),
    run: (name, env, events) => lambda.run(name, env, events),
    declare: (queue, args = {}) =>
      withChannel((channel) => channel.assertQueue(queue, { durable: true, arguments: args })).then(() => undefined),
    publish: (queue, bodies) =>
      withChannel(async (channel) => {
        for (const body of bodies) channel.sendToQueue(queue, Buffer.from(body), { persistent: true });
        await channel.waitForConfirms();
      }),
    drain: (queue) =>
      withChannel(async (channel) => {
        const bodies: string[] = [];
        for (let got = await channel.get(queue, { noAck: true }); got; got = await channel.get(queue, { noAck: true }))
          bodies.push(got.content.toString());
        return bodies;
      }),
    async listed(queues) {
      await eventually(
        async () => {
          const listing = await rabbit.api<{ name: string; messages_ready?: number }[]>(
            'GET',
            `/api/queues/${encodeURIComponent(rabbit.vhost)}?columns=name,messages_ready`,
          );
          return queues.every((name) => (listing.find((q) => q.name === name)?.messages_ready ?? 0) > 0) || undefined;
        },
        `the management listing to show ${queues.join(', ')} with messages`,
      );
    },
    async close() {
      lambda.close();
      await Promise.all([dynamo.stop(), rabbit.delete()]);
    },
  };
}
