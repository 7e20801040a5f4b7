import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { FairwayError } from '../errors';
import type { PassRequestEvent, PassTrigger } from './pass-trigger';

/** Starts a pass with an asynchronous invoke of the distributor function (InvocationType Event). */
export class LambdaPassTrigger implements PassTrigger {
  private readonly client: LambdaClient;

  constructor(
    private readonly functionName: string,
    options: { region: string; endpoint?: string },
  ) {
    this.client = new LambdaClient({ region: options.region, endpoint: options.endpoint });
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
        `Could not start a distributor pass for ${event.target} (async invoke of ${this.functionName}); the schedule's next pass covers it. Check the lambda:InvokeFunction permission.`,
        { cause: error },
      );
    }
  }

  destroy(): void {
    this.client.destroy();
  }
}
