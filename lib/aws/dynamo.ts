import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DynamoConfig } from '../config/common';

export interface StaticCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/**
 * The DynamoDB document client every Fairway function and tool builds once: the configured region
 * and, for local DynamoDB, an endpoint. Without `credentials` the SDK's usual chain finds them.
 */
export function documentClient(config: DynamoConfig, credentials?: StaticCredentials): DynamoDBDocumentClient {
  const client = new DynamoDBClient({ region: config.AWS_REGION, endpoint: config.DYNAMODB_ENDPOINT, credentials });
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}

/** True when a conditional write was refused because its condition did not hold (the only such check in Fairway). */
export function isConditionFailure(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}
