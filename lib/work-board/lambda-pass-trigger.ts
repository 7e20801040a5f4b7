import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { namingFailures } from '../platform/aws';
import { FairwayError } from '../platform/errors';
import { awsCallBoundMs, awsClientOptions, LAMBDA_INVOKE_BOUNDS } from '../platform/network-bounds';
import type { PassTrigger, WorkEvent } from './pass-trigger';
import type { PassRequestSettings } from './settings';

/** The longest a start can take before it fails: every try timing out (LAMBDA_INVOKE_BOUNDS). */
export const PASS_TRIGGER_BOUND_MS = awsCallBoundMs(LAMBDA_INVOKE_BOUNDS);

/** Starts an execution with an asynchronous invoke of the distributor function (InvocationType Event). */
export class LambdaPassTrigger implements PassTrigger {
  private readonly client: LambdaClient;

  constructor(
    private readonly functionName: string,
    options: { region: string; endpoint?: string },
  ) {
    this.client = namingFailures(
      new LambdaClient({
        region: options.region,
        endpoint: options.endpoint,
        ...awsClientOptions(LAMBDA_INVOKE_BOUNDS),
      }),
      'Lambda',
      LAMBDA_INVOKE_BOUNDS,
    );
  }

  async start(event: WorkEvent): Promise<void> {
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
        `Could not start a distributor execution (async invoke of ${this.functionName}); the schedule's next pass covers it. Check the lambda:InvokeFunction permission and that the function's network reaches the Lambda API (at most ${PASS_TRIGGER_BOUND_MS} ms are spent trying).`,
        { cause: error },
      );
    }
  }

  destroy(): void {
    this.client.destroy();
  }
}

/** The async invoke of the distributor function, if one is configured. */
export function lambdaPassTrigger(settings: PassRequestSettings): LambdaPassTrigger | undefined {
  if (settings.functionName === undefined) return undefined;
  return new LambdaPassTrigger(settings.functionName, { region: settings.region, endpoint: settings.lambdaEndpoint });
}
