import { Tracer } from '@aws-lambda-powertools/tracer';
import { AwsServiceError } from '../errors';
import { type AwsBounds, awsCallBoundMs } from '../network-bounds';

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
