import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ConfigError } from '../../lib/platform/errors';
import { projectRoot } from '../paths';
import { paramResolver } from '../service';

/** The router's SQS event source mapping (serverless.yml), as the local poller runs it. */
export interface EventSourceSettings {
  /** Records per invocation at most (Lambda: 1…10 without a batching window). */
  batchSize: number;
  /** How long records are gathered before an invocation with fewer than `batchSize`. */
  maximumBatchingWindowSeconds: number;
  /** `functionResponseType: ReportBatchItemFailures`: only the records the function lists are retried. */
  reportBatchItemFailures: boolean;
}

/** The after-process queue and its dead-letter queue (infra/sqs.yml). */
export interface AfterProcessQueueSettings {
  queueName: string;
  deadLetterQueueName: string;
  visibilityTimeoutSeconds: number;
  maxReceiveCount: number;
  messageRetentionSeconds: number;
}

/**
 * Router invocations the local poller runs at once (event-source.ts): its one loop awaits each batch's
 * invocation before it gathers the next, which keeps within any `maximumConcurrency` (AWS allows 2 and up).
 */
export const POLLER_CONCURRENCY = 1;

/** Keys of an `sqs` event that the local poller implements; any other would silently behave differently. */
const supportedEventKeys = new Set([
  'arn',
  'batchSize',
  'maximumBatchingWindow',
  'maximumConcurrency',
  'functionResponseType',
]);

interface SqsEvent {
  [key: string]: unknown;
}

/** Reads the router's `sqs` event of serverless.yml; a key the poller does not implement is a ConfigError. */
export function routerEventSource(): EventSourceSettings {
  const file = readYaml('serverless.yml') as { functions: Record<string, { events?: Array<{ sqs?: SqsEvent }> }> };
  const sqs = file.functions.router?.events?.find((e) => e.sqs)?.sqs;
  if (!sqs) throw new ConfigError(['serverless.yml: functions.router has no sqs event'], 'Restore the router’s event.');
  const unknown = Object.keys(sqs).filter((key) => !supportedEventKeys.has(key));
  if (unknown.length > 0) {
    throw new ConfigError(
      unknown.map((key) => `serverless.yml: functions.router sqs event: ${key} is not run by the local poller`),
      'Implement it in local/sqs/event-source.ts or remove it.',
    );
  }
  const resolve = paramResolver();
  const batchSize = Number(resolve(sqs.batchSize ?? 10));
  const window = Number(resolve(sqs.maximumBatchingWindow ?? 0));
  const problems = [
    ...(Number.isInteger(batchSize) && batchSize >= 1 && batchSize <= (window > 0 ? 10_000 : 10)
      ? []
      : ['batchSize must be 1…10 (up to 10000 with a batching window)']),
    ...(Number.isInteger(window) && window >= 0 && window <= 300 ? [] : ['maximumBatchingWindow must be 0…300']),
  ];
  if (problems.length > 0) throw new ConfigError(problems.map((p) => `serverless.yml: functions.router sqs: ${p}`));
  return {
    batchSize,
    maximumBatchingWindowSeconds: window,
    reportBatchItemFailures: sqs.functionResponseType === 'ReportBatchItemFailures',
  };
}

interface QueueResource {
  Properties: {
    QueueName: string;
    VisibilityTimeout?: number;
    MessageRetentionPeriod?: number;
    RedrivePolicy?: { maxReceiveCount?: number };
  };
}

/** Reads infra/sqs.yml's after-process queues, names resolved for `stage` as serverless does. */
export function afterProcessQueues(stage = 'dev'): AfterProcessQueueSettings {
  const file = readYaml('infra/sqs.yml') as {
    Resources: { AfterProcessQueue: QueueResource; AfterProcessDeadLetterQueue: QueueResource };
  };
  const { service } = readYaml('serverless.yml') as { service: string };
  const name = (resource: QueueResource) =>
    resource.Properties.QueueName.replace(/\$\{self:service\}/, service).replace(/\$\{sls:stage\}/, stage);
  const queue = file.Resources.AfterProcessQueue.Properties;
  const maxReceiveCount = Number(queue.RedrivePolicy?.maxReceiveCount);
  if (!(Number.isInteger(maxReceiveCount) && maxReceiveCount >= 1)) {
    throw new ConfigError(['infra/sqs.yml: AfterProcessQueue needs a RedrivePolicy with maxReceiveCount ≥ 1']);
  }
  return {
    queueName: name(file.Resources.AfterProcessQueue),
    deadLetterQueueName: name(file.Resources.AfterProcessDeadLetterQueue),
    // SQS's defaults when a property is absent.
    visibilityTimeoutSeconds: queue.VisibilityTimeout ?? 30,
    maxReceiveCount,
    messageRetentionSeconds: queue.MessageRetentionPeriod ?? 345_600,
  };
}

const readYaml = (path: string): unknown => parse(readFileSync(join(projectRoot(), path), 'utf8'));
