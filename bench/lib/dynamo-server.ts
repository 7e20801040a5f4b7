import type { AddressInfo, Server } from 'node:net';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { tableDefinitions } from '../../local/embedded-dynamo';
import { type DynamoRequestBody, dynamoRequestKind } from './fleet-metrics';
import { serveSideProcess } from './side-process';

// dynalite ships no types.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dynalite = require('dynalite') as (options: { createTableMs: number }) => Server;

/**
 * The bench's DynamoDB: dynalite in a process of its own, with the deployed tables. It counts
 * the requests it serves by operation (the `X-Amz-Target` header) and the time each took, on the
 * server itself, so counting adds no hop to what the bench times; and per caller by item kind
 * (fleet-metrics.ts `dynamoRequestKind`, from the request's JSON), with the conditional writes
 * whose condition failed (billed all the same) apart.
 */
async function main(): Promise<void> {
  const server = dynalite({ createTableMs: 0 });
  const counts = new Map<string, number>();
  // By the endpoint's first path segment (`http://…/router`): which client sent it, when each has its own.
  const byCaller = new Map<string, Map<string, number>>();
  /** Caller → item kind and operation (tab-separated) → requests, and of them those refused with ConditionalCheckFailedException. */
  const byKind = new Map<string, Map<string, { requests: number; conditionFailed: number }>>();
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
    const response = outgoing as import('node:http').ServerResponse;
    response.on('finish', () => (servedMs += performance.now() - started));
    // Listened to before dynalite's handler: both see every chunk, and this 'end' comes first.
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      let body: DynamoRequestBody = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as DynamoRequestBody;
      } catch {
        // dynalite answers a malformed body itself; it is counted as an unknown item
      }
      const kind = `${dynamoRequestKind(operation, body)}\t${operation}`;
      const kinds = byKind.get(caller) ?? byKind.set(caller, new Map()).get(caller)!;
      const entry = kinds.get(kind) ?? kinds.set(kind, { requests: 0, conditionFailed: 0 }).get(kind)!;
      entry.requests++;
      const end = response.end.bind(response) as (chunk?: unknown, ...rest: unknown[]) => typeof response;
      response.end = ((chunk?: unknown, ...rest: unknown[]) => {
        if (response.statusCode === 400 && String(chunk ?? '').includes('ConditionalCheckFailedException'))
          entry.conditionFailed++;
        return end(chunk, ...rest);
      }) as typeof response.end;
    });
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
  byKind.clear();
  serveSideProcess(
    { port },
    {
      counts: () => ({
        byOperation: Object.fromEntries(counts),
        byCaller: Object.fromEntries([...byCaller].map(([caller, ops]) => [caller, Object.fromEntries(ops)])),
        byKind: Object.fromEntries([...byKind].map(([caller, kinds]) => [caller, Object.fromEntries(kinds)])),
        servedMs,
      }),
      reset: () => {
        counts.clear();
        byCaller.clear();
        byKind.clear();
        servedMs = 0;
      },
    },
  );
}

main().catch((error: Error) => {
  console.error(error.stack ?? error.message);
  process.exit(1);
});
