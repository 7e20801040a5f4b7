import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { FairwayError } from '../errors';
import type { PassRequestEvent, PassTrigger } from './pass-trigger';

/**
 * Bounds of one invoke: a Lambda API that cannot be reached (a VPC subnet with no route to it), or
 * that accepts and never answers, must not hold the router's batch for its whole timeout (SQS would
 * then redeliver records already staged). The async invoke answers 202 in a few tens of ms.
 */
export const LAMBDA_CONNECTION_TIMEOUT_MS = 500;
export const LAMBDA_REQUEST_TIMEOUT_MS = 1_500;
/** Tries of an invoke, the first included (a second try is harmless: the lease admits one pass at a time). */
export const LAMBDA_INVOKE_ATTEMPTS = 2;
/** The longest a start can take before it fails: every try timing out. */
export const PASS_TRIGGER_BOUND_MS =
  LAMBDA_INVOKE_ATTEMPTS * (LAMBDA_CONNECTION_TIMEOUT_MS + LAMBDA_REQUEST_TIMEOUT_MS);

/** Starts a pass with an asynchronous invoke of the distributor function (InvocationType Event). */
export class LambdaPassTrigger implements PassTrigger {
  private readonly client: LambdaClient;

  constructor(
    private readonly functionName: string,
    options: { region: string; endpoint?: string },
  ) {
    this.client = new LambdaClient({
      region: options.region,
      endpoint: options.endpoint,
      maxAttempts: LAMBDA_INVOKE_ATTEMPTS,
      requestHandler: {
        connectionTimeout: LAMBDA_CONNECTION_TIMEOUT_MS,
        requestTimeout: LAMBDA_REQUEST_TIMEOUT_MS,
        // Without it the handler only logs a warning when the request timeout passes, and waits on.
        throwOnRequestTimeout: true,
      },
    });
  }

  async start(event: PassRequestEvent): Promise<void> {
    try {
      const answer = await this.client.send(
        new InvokeCommand({
          FunctionName: this.functionName,
          InvocationType: 'Event',
          Payload: Buffer.from(JSON.stringify(event)),
        }),
      );
      if (answer.StatusCode !== 202) throw new Error(`Lambda answered ${answer.StatusCode} instead of 202`);
    } catch (error) {
      throw new FairwayError(
        `Could not start a distributor pass for ${event.target} (async invoke of ${this.functionName}); the schedule's next pass covers it. Check the lambda:InvokeFunction permission and that the function's network reaches the Lambda API (at most ${PASS_TRIGGER_BOUND_MS} ms are spent trying).`,
        { cause: error },
      );
    }
  }

  destroy(): void {
    this.client.destroy();
  }
}
