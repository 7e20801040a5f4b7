// Runs one pass of the real distributor handler in its own process, so that a test can SIGKILL it
// at any point. Configured by the same environment as the Lambda; PASS_TUNING (JSON, read by this
// test script alone, never by the function) shortens the distributor's fixed values.
import type { Context, ScheduledEvent } from 'aws-lambda';
import { type DistributorTuning, loadDistributorConfig } from '../../../lib/distributor/config';
import { distributorFunction } from '../../../lib/wiring/distributor';
import { lambdaFunction } from '../../../lib/wiring/lambda-function';

const tuning = JSON.parse(process.env.PASS_TUNING ?? '{}') as Partial<DistributorTuning>;
const handler = lambdaFunction({ ...distributorFunction, load: (env) => loadDistributorConfig(env, tuning) });
const remainingMs = Number(process.env.PASS_REMAINING_MS ?? 30_000);
const deadline = Date.now() + remainingMs;
const context = {
  functionName: 'distributor',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:distributor',
  memoryLimitInMB: '512',
  awsRequestId: 'crash-test',
  getRemainingTimeInMillis: () => deadline - Date.now(),
} as unknown as Context;

handler({} as ScheduledEvent, context).then(
  () => process.exit(0),
  (error: Error) => {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  },
);
