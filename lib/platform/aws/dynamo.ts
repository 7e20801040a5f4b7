import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { awsClientOptions, DYNAMODB_BOUNDS } from '../network-bounds';
import { namingFailures } from './bounded-client';

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
 * The DynamoDB document client every Fairway function and tool builds once, from `settings`.
 * Without `credentials` the SDK's usual chain finds them.
 */
export function documentClient(
  settings: DynamoClientSettings,
  credentials?: StaticCredentials,
): DynamoDBDocumentClient {
  // Bounded (DYNAMODB_BOUNDS), so that a hung DynamoDB ends a step before the function's timeout
  // instead of leaving it running in a frozen container.
  const client = namingFailures(
    new DynamoDBClient({
      region: settings.region,
      endpoint: settings.endpoint,
      credentials,
      ...awsClientOptions(DYNAMODB_BOUNDS),
    }),
    'DynamoDB',
    DYNAMODB_BOUNDS,
  );
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}

/** True when a conditional write was refused because its condition did not hold (the only such check in Fairway). */
export function isConditionFailure(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}
