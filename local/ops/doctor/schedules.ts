import { DescribeRuleCommand, EventBridgeClient, ListRuleNamesByTargetCommand } from '@aws-sdk/client-eventbridge';
import { GetFunctionCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { namingFailures } from '../../../lib/platform/aws';
import type { Env } from '../../../lib/platform/config';
import { errorText } from '../../../lib/platform/errors';
import { awsClientOptions, CLI_AWS_BOUNDS } from '../../../lib/platform/network-bounds';
import { serviceFunctions } from '../../service';
import { type Check, fail, ok, skipped } from './check';

/** Whether the AWS SDK would find credentials in `env` (keys, a profile, web identity or a container role). */
export function hasAwsCredentials(env: Env): boolean {
  return Boolean(
    (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY) ||
      env.AWS_PROFILE ||
      env.AWS_WEB_IDENTITY_TOKEN_FILE ||
      env.AWS_CONTAINER_CREDENTIALS_FULL_URI ||
      env.AWS_CONTAINER_CREDENTIALS_RELATIVE_URI,
  );
}

export interface ScheduleClients {
  lambda: Pick<LambdaClient, 'send'>;
  events: Pick<EventBridgeClient, 'send'>;
}

/**
 * Each scheduled function of serverless.yml on `stage` is deployed and its EventBridge rule is in
 * the state the stage asks for (its `…Enabled` param), read through the AWS API. Skipped without
 * AWS credentials, and for a local stack (DYNAMODB_ENDPOINT set), which has no AWS schedules.
 */
export async function checkSchedules(stage: string, env: Env, clients?: ScheduleClients): Promise<Check[]> {
  if (env.DYNAMODB_ENDPOINT)
    return [skipped('schedules', 'a local stack (DYNAMODB_ENDPOINT is set): no AWS schedules')];
  if (!clients && !hasAwsCredentials(env)) return [skipped('schedules', 'skipped: no AWS credentials')];
  const region = env.AWS_REGION ?? 'eu-west-1';
  const bounded = { region, ...awsClientOptions(CLI_AWS_BOUNDS) };
  const own = clients
    ? undefined
    : {
        lambda: namingFailures(new LambdaClient(bounded), 'Lambda', CLI_AWS_BOUNDS),
        events: namingFailures(new EventBridgeClient(bounded), 'EventBridge', CLI_AWS_BOUNDS),
      };
  const { lambda, events } = clients ?? own!;
  try {
    const scheduled = serviceFunctions(stage).filter((fn) => fn.schedule);
    return await Promise.all(
      scheduled.map(async (fn) => {
        const check = `schedule of ${fn.deployedName}`;
        const wanted = fn.schedule!.enabled ? 'ENABLED' : 'DISABLED';
        try {
          const { Configuration } = await lambda.send(new GetFunctionCommand({ FunctionName: fn.deployedName }));
          const { RuleNames = [] } = await events.send(
            new ListRuleNamesByTargetCommand({ TargetArn: Configuration!.FunctionArn! }),
          );
          if (RuleNames.length === 0) return fail(check, 'no EventBridge rule invokes it: deploy the stack again');
          const states = await Promise.all(
            RuleNames.map(async (Name) => (await events.send(new DescribeRuleCommand({ Name }))).State),
          );
          if (states.every((state) => state === wanted))
            return ok(check, `${fn.schedule!.rate}, ${wanted.toLowerCase()}`);
          return fail(
            check,
            `its rule is ${states.join(', ').toLowerCase()} but the stage says ${wanted.toLowerCase()}: deploy the stage again, or set its …Enabled param`,
          );
        } catch (error) {
          if (error instanceof Error && error.name === 'ResourceNotFoundException') {
            return fail(
              check,
              `${fn.deployedName} is not deployed in ${region}: npx serverless deploy --stage ${stage}`,
            );
          }
          return fail(
            check,
            `could not be read (${errorText(error)}): the caller needs lambda:GetFunction, events:ListRuleNamesByTarget and events:DescribeRule`,
          );
        }
      }),
    );
  } finally {
    own?.lambda.destroy();
    own?.events.destroy();
  }
}
