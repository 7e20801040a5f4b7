import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';

/** The logger and the metrics sink of one function; only `lib/<part>/service.ts` files build them. */
export interface Observability {
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** X-Ray segments per invocation; off unless the stage sets `tracing: true` (POWERTOOLS_TRACE_ENABLED) and on Lambda. */
  readonly tracer?: Tracer;
}

/**
 * A logger and a metrics sink of one function's own, so functions that share a process (`npm start`,
 * the CLI) never mix log fields or metric dimensions. Every log line names its function.
 */
export function createObservability(functionName: string): Observability {
  return {
    logger: new Logger({ serviceName: 'fairway', persistentKeys: { function: functionName } }),
    // serverless.yml gives each stage its own namespace, so one stage's metrics never fire another's alarms.
    metrics: new Metrics({ namespace: process.env.POWERTOOLS_METRICS_NAMESPACE || 'Fairway', serviceName: 'fairway' }),
    tracer: new Tracer({ serviceName: 'fairway', enabled: process.env.POWERTOOLS_TRACE_ENABLED === 'true' }),
  };
}
