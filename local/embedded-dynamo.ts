import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { CreateTableCommand, type CreateTableCommandInput, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { parse } from 'yaml';
import { projectRoot } from './paths';

// dynalite ships no types.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dynalite = require('dynalite') as (options: { createTableMs: number }) => import('node:net').Server;

export interface EmbeddedDynamo {
  endpoint: string;
  client: DynamoDBClient;
  doc: DynamoDBDocumentClient;
  /** Creates the tables of infra/dynamodb.yml, named by their logical id (e.g. `TenantCountersTable`). */
  createTables(): Promise<void>;
  stop(): Promise<void>;
}

/** An in-process DynamoDB (dynalite), in memory: one per test file, or the local stack's. */
export async function startDynamo(): Promise<EmbeddedDynamo> {
  const server = dynalite({ createTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  return {
    endpoint,
    client,
    doc: DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } }),
    async createTables() {
      for (const input of tableDefinitions()) await client.send(new CreateTableCommand(input));
    },
    async stop() {
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The deployed table definitions, so tests run against the real key schemas. */
export function tableDefinitions(): CreateTableCommandInput[] {
  const file = parse(readFileSync(join(projectRoot(), 'infra/dynamodb.yml'), 'utf8')) as {
    Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
  };
  return Object.entries(file.Resources)
    .filter(([, resource]) => resource.Type === 'AWS::DynamoDB::Table')
    .map(([logicalId, { Properties: p }]) => ({
      TableName: logicalId,
      AttributeDefinitions: p.AttributeDefinitions as CreateTableCommandInput['AttributeDefinitions'],
      KeySchema: p.KeySchema as CreateTableCommandInput['KeySchema'],
      GlobalSecondaryIndexes: p.GlobalSecondaryIndexes as CreateTableCommandInput['GlobalSecondaryIndexes'],
      BillingMode: 'PAY_PER_REQUEST',
    }));
}
