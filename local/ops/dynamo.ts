import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DynamoConfig } from '../../lib/config/common';

/** A document client as the functions build theirs: the region and, for local DynamoDB, an endpoint. */
export function documentClient(config: DynamoConfig): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(new DynamoDBClient({ region: config.AWS_REGION, endpoint: config.DYNAMODB_ENDPOINT }));
}
