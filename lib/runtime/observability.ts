import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';

/** One logger and one metrics sink per container; CloudWatch reads both (EMF for metrics). */
export const logger = new Logger({ serviceName: 'fairway' });
export const metrics = new Metrics({ namespace: 'Fairway', serviceName: 'fairway' });
