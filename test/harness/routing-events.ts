import { readFileSync } from 'node:fs';
import { type Channel, type ChannelModel, connect, type GetMessage, type Options } from 'amqplib';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { loadRouterConfig, type RouterConfig, type RouterTuning } from '../../lib/routing/config';
import type { AfterProcessEvent } from '../../lib/routing/event';
import type { RecordFailure } from '../../lib/routing/record-failures';
import type { NameShortened, RouterReport, TenantlessRouted, TenantRouted } from '../../lib/routing/report';
import { createRouterService } from '../../lib/wiring/router';
import { fixturePath } from '../fixtures';
import { type EmbeddedDynamo, startDynamo } from './dynamo';
import { createTestVhost, type TestVhost } from './rabbit';

/**
 * Shared by the router's integration tests: SQS events shaped like AWS's sample, a recording
 * report, and the test bed most of them route through.
 */

const sample = (JSON.parse(readFileSync(fixturePath('sqs-event.json'), 'utf8')) as SQSEvent).Records[0]!;
let sequence = 0;

export function sqsRecord(
  body: string | AfterProcessEvent,
  messageAttributes: SQSRecord['messageAttributes'] = {},
): SQSRecord {
  return {
    ...sample,
    messageId: `msg-${++sequence}`,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    messageAttributes,
  };
}

export const sqsEvent = (records: SQSRecord[]): SQSEvent => ({ Records: records });

export const event = (target: string, tenantId: string, body: string, workflowName?: string): AfterProcessEvent => ({
  target,
  tenantId,
  ...(workflowName ? { workflowName } : {}),
  message: { body },
});

export const lambdaContext = {
  functionName: 'router',
  awsRequestId: 'test',
  getRemainingTimeInMillis: () => 30_000,
} as unknown as Context;

export function recordingReport() {
  const failures: RecordFailure[] = [];
  const tenants: TenantRouted[] = [];
  const counts: Record<string, number> = {};
  const kept: Parameters<RouterReport['stagingQueueKept']>[0][] = [];
  const tenantless: TenantlessRouted[] = [];
  const shortened: NameShortened[] = [];
  const passRequestFailures: { target: string; error: unknown }[] = [];
  const directRoutingUnread: unknown[] = [];
  const report: RouterReport = {
    failed: (failure) => failures.push(failure),
    tenantRouted: (routed) => tenants.push(routed),
    tenantlessRouted: (routed) => tenantless.push(routed),
    nameShortened: (item) => shortened.push(item),
    counted: (metric, count) => {
      counts[metric] = (counts[metric] ?? 0) + count;
    },
    stagingQueueKept: (queue) => kept.push(queue),
    passRequestFailed: (target, error) => passRequestFailures.push({ target, error }),
    directRoutingUnread: (error) => directRoutingUnread.push(error),
  };
  return { report, failures, tenants, counts, kept, tenantless, shortened, passRequestFailures, directRoutingUnread };
}

/** The router's configuration for a test vhost and dynalite, as the function reads it from its environment. */
export function routerConfig(
  rabbit: TestVhost,
  dynamo: EmbeddedDynamo,
  extra: Record<string, string> = {},
  tuning: Partial<RouterTuning> = {},
): RouterConfig {
  // The AWS SDK wants credentials even for dynalite.
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
  return loadRouterConfig(
    {
      AMQP_URL: rabbit.amqpUrl,
      RABBITMQ_MANAGEMENT_URL: rabbit.managementUrl,
      RABBITMQ_VHOST: rabbit.vhost,
      TENANT_TABLE: 'TenantCountersTable',
      DYNAMODB_ENDPOINT: dynamo.endpoint,
      // Every message staged unless a test turns direct routing on (routing/direct-routing.test.ts).
      DIRECT_ROUTING: 'off',
      ...extra,
    },
    tuning,
  );
}

/** What a router integration test routes through: dynalite, a vhost with its queues, a channel on it, the router. */
export interface RouterTestBed {
  dynamo: EmbeddedDynamo;
  rabbit: TestVhost;
  /** Open until `close()`: for the test to declare, read and drain queues. */
  channel: Channel;
  service: ReturnType<typeof createRouterService>;
  recorded: ReturnType<typeof recordingReport>;
  /** Takes every message `queue` holds now, without acks. */
  drain(queue: string): Promise<GetMessage[]>;
  /** Closes the router and the channel's connection, stops dynalite and deletes the vhost. */
  close(): Promise<void>;
}

/**
 * Starts dynalite with its tables and a test vhost, declares `queues` (name → assertQueue options,
 * in order) and builds the router on them with a recording report; `env` adds to its configuration.
 */
export async function startRouterTestBed({
  queues,
  env = {},
}: {
  queues: Record<string, Options.AssertQueue>;
  env?: Record<string, string>;
}): Promise<RouterTestBed> {
  const [dynamo, rabbit] = await Promise.all([startDynamo(), createTestVhost()]);
  let connection: ChannelModel | undefined;
  let service: RouterTestBed['service'] | undefined;
  const close = async () => {
    await service?.close();
    await connection?.close();
    await Promise.all([dynamo.stop(), rabbit.delete()]);
  };
  try {
    await dynamo.createTables();
    connection = await connect(rabbit.amqpUrl);
    const channel = await connection.createChannel();
    for (const [name, options] of Object.entries(queues)) await channel.assertQueue(name, options);
    const recorded = recordingReport();
    service = createRouterService(routerConfig(rabbit, dynamo, env), recorded.report);
    const drain = async (queue: string) => {
      const messages: GetMessage[] = [];
      for (let got = await channel.get(queue, { noAck: true }); got; got = await channel.get(queue, { noAck: true }))
        messages.push(got);
      return messages;
    };
    return { dynamo, rabbit, channel, service, recorded, drain, close };
  } catch (error) {
    await close();
    throw error;
  }
}
