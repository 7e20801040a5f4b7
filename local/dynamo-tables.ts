import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { parse } from 'yaml';
import { projectRoot } from './paths';

/** The deployed table definitions, so tests run against the real key schemas and `fairway doctor` checks them (no dynalite here: the CLI bundle must not load it). */
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
