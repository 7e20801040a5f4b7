import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { tableDefinitions } from './dynamo-tables';

// dynalite ships no types.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dynalite = require('dynalite') as (options: { createTableMs: number }) => Server;

export interface EmbeddedDynamo {
  endpoint: string;
  client: DynamoDBClient;
  doc: DynamoDBDocumentClient;
  /** Creates the tables of infra/dynamodb.yml, named by their logical id (e.g. `TenantCountersTable`). */
  createTables(): Promise<void>;
  stop(): Promise<void>;
}

/** The clients of a local DynamoDB at `endpoint` (dynalite takes any credentials). */
export function localDynamoClients(endpoint: string): { client: DynamoDBClient; doc: DynamoDBDocumentClient } {
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  return { client, doc: DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } }) };
}

/** An in-process DynamoDB (dynalite), in memory: one per test file, or the local stack's. */
export async function startDynamo(): Promise<EmbeddedDynamo> {
  const server = dynalite({ createTableMs: 0 });
  const inFlight = countRequestsInFlight(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { client, doc } = localDynamoClients(endpoint);
  return {
    endpoint,
    client,
    doc,
    async createTables() {
      for (const input of tableDefinitions()) await client.send(new CreateTableCommand(input));
    },
    async stop() {
      client.destroy();
      // dynalite closes its store with the server and throws (uncaught) from any request still
      // being processed: new requests are refused from now on, and those in flight finish first.
      inFlight.refuseNew();
      for (const until = Date.now() + 10_000; inFlight.count() > 0 && Date.now() < until; ) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Counts the requests the server has received and not yet answered; once stopping, answers new ones 503. */
function countRequestsInFlight(server: Server) {
  let count = 0;
  let refusing = false;
  const handlers = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (refusing) {
      res.writeHead(503, { connection: 'close' }).end();
      return;
    }
    count++;
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    res.end = ((...args: unknown[]) => {
      count--;
      return end(...args);
    }) as ServerResponse['end'];
    for (const handler of handlers) handler.call(server, req, res);
  });
  return {
    count: () => count,
    refuseNew: () => {
      refusing = true;
    },
  };
}

export { tableDefinitions };
