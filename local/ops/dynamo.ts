import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DynamoConfig } from '../../lib/config/common';
import type { Env } from '../../lib/config/env';

/**
 * A document client as the functions build theirs (region and, for local DynamoDB, an endpoint).
 * Credentials given in `env` are used as such; otherwise the SDK's usual chain finds them.
 */
export function documentClient(config: DynamoConfig, env: Env): DynamoDBDocumentClient {
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_SESSION_TOKEN: sessionToken } = env;
  return DynamoDBDocumentClient.from(
    new DynamoDBClient({
      region: config.AWS_REGION,
      endpoint: config.DYNAMODB_ENDPOINT,
      ...(accessKeyId && secretAccessKey ? { credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } } : {}),
    }),
  );
}
