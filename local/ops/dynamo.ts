import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../../lib/platform/aws';
import type { Env } from '../../lib/platform/config';
import { type DynamoConfig, dynamoClientSettings } from '../../lib/settings/common';

/** The functions' document client, with credentials taken from `env` (the CLI's) when it has them. */
export function cliDocumentClient(config: DynamoConfig, env: Env): DynamoDBDocumentClient {
  const {
    AWS_ACCESS_KEY_ID: accessKeyId,
    AWS_SECRET_ACCESS_KEY: secretAccessKey,
    AWS_SESSION_TOKEN: sessionToken,
  } = env;
  return documentClient(
    dynamoClientSettings(config),
    accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey, sessionToken } : undefined,
  );
}
