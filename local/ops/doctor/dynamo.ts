import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { z } from 'zod';
import { type Env, parseEnv } from '../../../lib/platform/config';
import { errorText } from '../../../lib/platform/errors';
import { dynamoSettings } from '../../../lib/settings/common';
import { tableDefinitions } from '../../dynamo-tables';
import { cliDocumentClient } from '../dynamo';
import { type Check, fail, ok, skipped } from './check';

/** Each table variable and the infra/dynamodb.yml table it must be. */
const tables = {
  TENANT_TABLE: 'TenantCountersTable',
  DISTRIBUTOR_TABLE: 'DistributorStateTable',
  CLEANUP_TABLE: 'CleanupStackTable',
  STAGING_TABLE: 'StagingQueuesTable',
} as const;

/** Each configured DynamoDB table exists, is active and has the key schema of infra/dynamodb.yml. */
export async function checkTables(env: Env): Promise<Check[]> {
  const settings = parseEnv(z.object(dynamoSettings), env);
  const doc = cliDocumentClient(settings, env);
  const keysOf = (schema: { AttributeName?: string; KeyType?: string }[] = []) =>
    schema.map((k) => `${k.AttributeName} ${k.KeyType}`).join(', ');
  const expected = new Map(tableDefinitions().map((t) => [t.TableName, keysOf(t.KeySchema)]));
  try {
    return await Promise.all(
      Object.entries(tables).map(async ([variable, logicalId]) => {
        const name = env[variable];
        const check = `DynamoDB table ${variable}`;
        if (!name) return skipped(check, `${variable} is not set`);
        try {
          const { Table } = await doc.send(new DescribeTableCommand({ TableName: name }));
          const keys = keysOf(Table?.KeySchema);
          if (keys !== expected.get(logicalId)) {
            return fail(
              check,
              `${name} is keyed (${keys}), not as infra/dynamodb.yml's ${logicalId} (${expected.get(logicalId)}): point ${variable} at the stage's table`,
            );
          }
          return ok(check, `${name} (${Table?.TableStatus ?? 'status unknown'})`);
        } catch (error) {
          if (error instanceof Error && error.name === 'ResourceNotFoundException') {
            return fail(check, `${name} does not exist: deploy the stack (npx serverless deploy) or fix ${variable}`);
          }
          return fail(
            check,
            `${name} could not be described (${errorText(error)}): check AWS_REGION, credentials and dynamodb:DescribeTable`,
          );
        }
      }),
    );
  } finally {
    doc.destroy();
  }
}
