// One Lambda container in a process of its own: Node reads NODE_EXTRA_CA_CERTS only at start, as
// on Lambda, so a test points Fairway at a CA the way a deployer does. Bundled and started by
// lambda-node.ts. argv: the function (router, distributor or a cleanup job); FAIRWAY_EVENTS: a JSON
// array of events, one invocation each, in one warm container; FAIRWAY_TEST_TUNING: fixed values a
// cleanup test replaces (JSON, read by this test harness alone, never by a function). Each result is a `FAIRWAY_RESULT`
// line on stdout; a failed invocation ends the process with the error's text on stderr.
import type { Context } from 'aws-lambda';
import { errorText } from '../../lib/platform/errors';
import { type CleanupTuning, cleanupFunction } from '../../lib/wiring/cleanup';
import { distributorFunction } from '../../lib/wiring/distributor';
import { lambdaFunction } from '../../lib/wiring/lambda-function';
import { routerFunction } from '../../lib/wiring/router';

type Handler = ((event: never, context: Context) => Promise<unknown>) & { close(): Promise<void> };

const tuning = JSON.parse(process.env.FAIRWAY_TEST_TUNING ?? '{}') as Partial<CleanupTuning>;

const builders: Record<string, () => Handler> = {
  router: () => lambdaFunction(routerFunction) as Handler,
  distributor: () => lambdaFunction(distributorFunction) as Handler,
  'registry-timebased-cleanup': () => lambdaFunction(cleanupFunction('registry-timebased-cleanup', tuning)) as Handler,
  'registry-status90-cleanup': () => lambdaFunction(cleanupFunction('registry-status90-cleanup', tuning)) as Handler,
  'repository-cleanup': () => lambdaFunction(cleanupFunction('repository-cleanup', tuning)) as Handler,
};

async function main(name: string): Promise<void> {
  const build = builders[name];
  if (!build) throw new Error(`lambda-process: no function ${JSON.stringify(name)}`);
  const handler = build();
  const deadline = Date.now() + 30_000;
  const context = {
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${name}`,
    memoryLimitInMB: '512',
    awsRequestId: 'tls-test',
    getRemainingTimeInMillis: () => deadline - Date.now(),
  } as unknown as Context;
  try {
    for (const event of JSON.parse(process.env.FAIRWAY_EVENTS ?? '[{}]') as never[]) {
      process.stdout.write(`FAIRWAY_RESULT ${JSON.stringify((await handler(event, context)) ?? null)}\n`);
    }
  } finally {
    await handler.close?.().catch(() => undefined);
  }
}

main(process.argv[2] ?? '').then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${errorText(error)}\n`);
    process.exit(1);
  },
);
