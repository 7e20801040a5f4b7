import type { AddressInfo, Server } from 'node:net';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { tableDefinitions } from '../../local/embedded-dynamo';
import { serveSideProcess } from './side-process';

// dynalite ships no types.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dynalite = require('dynalite') as (options: { createTableMs: number }) => Server;

/**
 * The bench's DynamoDB: dynalite in a process of its own, with the deployed tables. It counts
 * the requests it serves by operation (the `X-Amz-Target` header) and the time each took, on the
 * server itself, so counting adds no hop to what the bench times.
 */
async function main(): Promise<void> {
  const server = dynalite({ createTableMs: 0 });
  const counts = new Map<string, number>();
  // By the endpoint's first path segment (`http://…/router`): which client sent it, when each has its own.
  const byCaller = new Map<string, Map<string, number>>();
  let servedMs = 0;
  server.prependListener('request', (incoming: import('node:http').IncomingMessage, outgoing) => {
    const operation = String(incoming.headers['x-amz-target'] ?? 'unknown')
      .split('.')
      .pop()!;
    counts.set(operation, (counts.get(operation) ?? 0) + 1);
    const caller = (incoming.url ?? '/').split('/')[1] || '';
    const ofCaller = byCaller.get(caller) ?? byCaller.set(caller, new Map()).get(caller)!;
    ofCaller.set(operation, (ofCaller.get(operation) ?? 0) + 1);
    const started = performance.now();
    (outgoing as import('node:http').ServerResponse).on('finish', () => (servedMs += performance.now() - started));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const client = new DynamoDBClient({
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  for (const input of tableDefinitions()) await client.send(new CreateTableCommand(input));
  client.destroy();
  counts.clear();
  byCaller.clear();
  serveSideProcess(
    { port },
    {
      counts: () => ({
        byOperation: Object.fromEntries(counts),
        byCaller: Object.fromEntries([...byCaller].map(([caller, ops]) => [caller, Object.fromEntries(ops)])),
        servedMs,
      }),
      reset: () => {
        counts.clear();
        byCaller.clear();
        servedMs = 0;
      },
    },
  );
}

main().catch((error: Error) => {
  console.error(error.stack ?? error.message);
  process.exit(1);
});
