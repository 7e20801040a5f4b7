import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** Where the client sends its calls: a region and, only for local or embedded DynamoDB, an endpoint URL. */
export interface DynamoClientSettings {
  region: string;
  endpoint?: string;
}

export interface StaticCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/**
 * Per attempt; with the DynamoDB client's 4 attempts a hung DynamoDB fails a call in about 16 s,
 * inside the shortest function timeout (the router's 30 s), so a step ends cleanly instead of
 * running on in a frozen container.
 */
export const DYNAMODB_REQUEST_TIMEOUT_MS = 4_000;
const DYNAMODB_CONNECTION_TIMEOUT_MS = 1_000;

/**
 * The DynamoDB document client every Fairway function and tool builds once, from `settings`.
 * Without `credentials` the SDK's usual chain finds them.
 */
export function documentClient(
  settings: DynamoClientSettings,
  credentials?: StaticCredentials,
): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    region: settings.region,
    endpoint: settings.endpoint,
    credentials,
    requestHandler: {
      requestTimeout: DYNAMODB_REQUEST_TIMEOUT_MS,
      connectionTimeout: DYNAMODB_CONNECTION_TIMEOUT_MS,
      // Without it the handler only logs a warning when the request timeout passes, and waits on.
      throwOnRequestTimeout: true,
    },
  });
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}

/** True when a conditional write was refused because its condition did not hold (the only such check in Fairway). */
export function isConditionFailure(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}
