import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { z } from 'zod';
import { namingFailures } from '../platform/aws';
import { FairwayError, InvalidEventError } from '../platform/errors';
import { awsCallBoundMs, awsClientOptions, LAMBDA_INVOKE_BOUNDS } from '../platform/network-bounds';

/** The event that starts a distributor execution on demand (docs/distributor.md "Run model"). */
export interface WorkEvent {
  source: 'fairway.work';
}

/**
 * The event of the earlier run model, one pass over one target; still accepted (an invoke queued
 * before a deploy): its target is written on the work board and the invocation runs as an execution.
 */
export interface PassRequestEvent {
  source: 'fairway.pass-request';
  requestId: string;
  target: string;
  /** Ignored now: the board's due times replace the wait inside the invocation. */
  delayMs: number;
}

export type DistributorEvent = WorkEvent | PassRequestEvent;

/** Starts a distributor execution, without waiting for it (Lambda async invoke). */
export interface PassTrigger {
  start(event: WorkEvent): Promise<void>;
}

export const WORK_EVENT: WorkEvent = { source: 'fairway.work' };

const passRequestEvent = z.strictObject({
  source: z.literal('fairway.pass-request'),
  requestId: z.string().min(1),
  target: z.string().min(1),
  delayMs: z.number().int().min(0),
});
const workEvent = z.strictObject({ source: z.literal('fairway.work') });

/**
 * A work event or an earlier pass request, or undefined for any other event (the schedule's); a
 * malformed one is an InvalidEventError naming the field.
 */
export function parseDistributorEvent(event: unknown): DistributorEvent | undefined {
  const source = (event as { source?: unknown } | null)?.source;
  const schema =
    source === 'fairway.work' ? workEvent : source === 'fairway.pass-request' ? passRequestEvent : undefined;
  if (schema === undefined) return undefined;
  const parsed = schema.safeParse(event);
  if (parsed.success) return parsed.data as DistributorEvent;
  throw new InvalidEventError(
    parsed.error.issues.map((issue) => ({ field: issue.path.join('.') || '(event)', reason: issue.message })),
  );
}

/** How a function asks for passes, translated once from its configuration (lib/settings/common.ts). */
export interface PassRequestSettings {
  /** The distributor's table, whose lease items record requested passes; unset: passes run on the schedule alone. */
  readonly table: string | undefined;
  /** The distributor function invoked asynchronously for a pass on demand; unset: schedule alone. */
  readonly functionName: string | undefined;
  /** A requested pass not started this long after it was due is presumed lost and asked for again. */
  readonly graceMs: number;
  readonly region: string;
  /** A Lambda endpoint URL, only for the local stack and the benches. */
  readonly lambdaEndpoint: string | undefined;
}

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
