import { Tracer } from '@aws-lambda-powertools/tracer';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { AwsServiceError } from './errors';
import { type AwsBounds, awsCallBoundMs, awsClientOptions, DYNAMODB_BOUNDS } from './network-bounds';

/** Where the client sends its calls: a region and, only for local or embedded DynamoDB, an endpoint URL. */
export interface DynamoClientSettings {
  region: string;
  endpoint?: string;
}

export interface StaticCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/**
 * The DynamoDB document client every Fairway function and tool builds once, from `settings`.
 * Without `credentials` the SDK's usual chain finds them.
 */
export function documentClient(
  settings: DynamoClientSettings,
  credentials?: StaticCredentials,
): DynamoDBDocumentClient {
  // Bounded (DYNAMODB_BOUNDS), so that a hung DynamoDB ends a step before the function's timeout
  // instead of leaving it running in a frozen container.
  const client = namingFailures(
    new DynamoDBClient({
      region: settings.region,
      endpoint: settings.endpoint,
      credentials,
      ...awsClientOptions(DYNAMODB_BOUNDS),
    }),
    'DynamoDB',
    DYNAMODB_BOUNDS,
  );
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}

/** True when a conditional write was refused because its condition did not hold (the only such check in Fairway). */
export function isConditionFailure(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

/** The one call a store makes to DynamoDB; wrapped here to retry, and in tests to inject faults. */
export type DocumentPort = Pick<DynamoDBDocumentClient, 'send'>;

export interface BackOff {
  /** Tries in all, the first included. */
  attempts: number;
  baseDelayMs: number;
  sleep?: (ms: number) => Promise<void>;
}

/** Beyond the SDK's own three tries: a throttled table often needs seconds, not milliseconds. */
export const throttlingBackOff: BackOff = { attempts: 6, baseDelayMs: 50 };

const throttlingNames = new Set([
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
]);

/** DynamoDB refused the request for capacity: nothing was written, so trying again is always safe. */
export function isThrottling(error: unknown): boolean {
  return error instanceof Error && throttlingNames.has(error.name);
}

/**
 * DynamoDB failed on its side (5xx): the write may or may not have been applied. Only a write
 * that can tell its own earlier success apart (a conditional write naming its owner) may retry.
 */
export function isServerFault(error: unknown): boolean {
  const fault = error as { $fault?: string; $metadata?: { httpStatusCode?: number } } | undefined;
  return (
    error instanceof Error &&
    (fault?.$fault === 'server' ||
      (fault?.$metadata?.httpStatusCode ?? 0) >= 500 ||
      error.name === 'InternalServerError')
  );
}

/** Runs `call`, again after a jittered exponential back-off while `retryable` says so; the last error is thrown. */
export async function withBackOff<T>(
  call: () => Promise<T>,
  retryable: (error: unknown) => boolean,
  { attempts, baseDelayMs, sleep = defaultSleep }: BackOff,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (attempt >= attempts || !retryable(error)) throw error;
      await sleep(baseDelayMs * 2 ** (attempt - 1) * (0.5 + Math.random() / 2));
    }
  }
}

/** A port that retries every throttled call (safe: a throttled request wrote nothing). */
export function retryingThrottled(port: DocumentPort, backOff: BackOff = throttlingBackOff): DocumentPort {
  return {
    send: ((command: Parameters<DocumentPort['send']>[0], ...rest: unknown[]) =>
      withBackOff(
        () => (port.send as (...args: unknown[]) => Promise<unknown>)(command, ...rest),
        isThrottling,
        backOff,
      )) as DocumentPort['send'],
  };
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type InitializeMiddleware = (next: (args: unknown) => Promise<unknown>) => (args: unknown) => Promise<unknown>;

/** The part of an AWS SDK v3 client this module touches (every client has it, typed per client). */
interface ClientWithMiddleware {
  readonly middlewareStack: { add(...args: never[]): void };
}

/** Errors of the network, not of the service: no answer in time, or no connection at all. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'ETIMEDOUT',
]);

function networkFailure(error: unknown): 'timeout' | 'unreachable' | undefined {
  if (!(error instanceof Error)) return undefined;
  if ((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode !== undefined) return undefined;
  if (error.name === 'TimeoutError') return 'timeout';
  return NETWORK_CODES.has(String((error as { code?: unknown }).code)) ? 'unreachable' : undefined;
}

/**
 * `client`, whose calls that end without an answer (every attempt timed out, or no connection)
 * fail with an AwsServiceError naming `service` and the bound, the SDK's error as its cause.
 * Errors the service answered with (throttling, a failed condition) are passed on as they are.
 * Every AWS client of Fairway is made here, so this is where tracing captures them: with tracing
 * on (POWERTOOLS_TRACE_ENABLED=true, on Lambda) each call is an X-Ray subsegment of the invocation's.
 */
export function namingFailures<C extends ClientWithMiddleware>(client: C, service: string, bounds: AwsBounds): C {
  const add = client.middlewareStack.add.bind(client.middlewareStack) as unknown as (
    middleware: InitializeMiddleware,
    options: object,
  ) => void;
  add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        const failure = networkFailure(error);
        if (failure === 'timeout')
          throw new AwsServiceError(
            service,
            `did not answer within ${awsCallBoundMs(bounds)} ms (${bounds.attempts} attempts, ${bounds.connectTimeoutMs} ms to connect and ${bounds.requestTimeoutMs} ms to answer each)`,
            { cause: error },
          );
        if (failure === 'unreachable')
          throw new AwsServiceError(service, 'could not be reached: check the network path to it', { cause: error });
        throw error;
      }
    },
    { step: 'initialize', name: 'fairwayNamesUnansweredService', priority: 'high' },
  );
  // Read when the client is built (once per container); off, the Tracer returns the client as it is.
  return new Tracer({
    serviceName: 'fairway',
    enabled: process.env.POWERTOOLS_TRACE_ENABLED === 'true',
  }).captureAWSv3Client(client);
}
