import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

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
