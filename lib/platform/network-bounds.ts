/**
 * How long every network client of Fairway waits, in one place (docs/configuration.md "Network
 * bounds"). A server that accepts a connection and never answers (a hung broker, a route that drops
 * packets after the handshake, a database frozen mid-statement) must fail the call with an error
 * naming the service, before the function's timeout: the router has 30 s, the distributor 60 s,
 * the cleanup jobs 120 s (serverless.yml). Otherwise the invocation runs on to its timeout in a
 * frozen container and SQS redelivers records already handled.
 */

/** An AWS SDK client's bounds: per attempt, and how many attempts (the first included). */
export interface AwsBounds {
  readonly connectTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly attempts: number;
}

/** Every function's DynamoDB calls: ~16 s for a hung DynamoDB (4 × 4 s), inside the router's 30 s. */
export const DYNAMODB_BOUNDS: AwsBounds = { connectTimeoutMs: 1_000, requestTimeoutMs: 4_000, attempts: 4 };

/** A secret read, at a function's first invocation and every 5 minutes after: ~12 s at most (3 × 4 s). */
export const SECRETS_MANAGER_BOUNDS: AwsBounds = { connectTimeoutMs: 1_000, requestTimeoutMs: 4_000, attempts: 3 };

/**
 * The router's and the distributor's asynchronous invoke of the distributor (a pass on demand),
 * answered 202 in tens of ms: ~4 s at most, after the batch's records are staged, so that a Lambda
 * API out of reach (a VPC subnet without a route to it) does not hold the batch to its timeout
 * (SQS would deliver it again). A second try is harmless: the lease admits one pass at a time.
 */
export const LAMBDA_INVOKE_BOUNDS: AwsBounds = { connectTimeoutMs: 500, requestTimeoutMs: 1_500, attempts: 2 };

/** The CLI's AWS calls (SQS, EventBridge, Lambda, Secrets Manager): ~14 s; a dead-letter scan long-polls 1 s. */
export const CLI_AWS_BOUNDS: AwsBounds = { connectTimeoutMs: 2_000, requestTimeoutMs: 5_000, attempts: 2 };

/** The longest an AWS call under `bounds` can take before it fails, back-offs aside: every attempt timing out. */
export const awsCallBoundMs = ({ connectTimeoutMs, requestTimeoutMs, attempts }: AwsBounds): number =>
  attempts * (connectTimeoutMs + requestTimeoutMs);

/** The AWS SDK v3 client options that enforce `bounds` (spread into a client's constructor options). */
export function awsClientOptions(bounds: AwsBounds) {
  return {
    maxAttempts: bounds.attempts,
    requestHandler: {
      connectionTimeout: bounds.connectTimeoutMs,
      requestTimeout: bounds.requestTimeoutMs,
      // Without it the handler only logs a warning when the request timeout passes, and waits on.
      throwOnRequestTimeout: true,
    },
  };
}

/**
 * AMQP: the connection's TCP (and TLS) handshake and AMQP open; any RPC on a channel (open,
 * declare, check, consume, cancel, qos), answered in milliseconds by a live broker, 5 s even
 * behind 100 queued declares; and a close, which needs no answer to be given up.
 */
export const AMQP_BOUNDS = { connectTimeoutMs: 5_000, operationTimeoutMs: 5_000, closeTimeoutMs: 2_000 } as const;

/** One management API request, connection, answer and body together: a listing of 5,000 queues took 0.43–1.6 s. */
export const MANAGEMENT_API_TIMEOUT_MS = 10_000;

/**
 * PostgreSQL: a connection attempt, and a statement (client `query_timeout`, server
 * `statement_timeout`), at most; the cleanup engine keeps it to half the cleanup
 * function's timeout. A connection may wait on an Aurora Serverless resume (~15 s); a batch delete
 * on a large registry takes seconds.
 */
export const POSTGRES_TIMEOUT_DEFAULT_SECONDS = 30;
