import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { operationKey } from '../../lib/cleanup/engine/keys';
import type { DocumentPort } from '../../lib/cleanup/engine/stack-store';

/** Puts `operation` on `job`'s stack as an earlier version left it on a deployed stack: on top, unclaimed, no parent. */
export async function leftByEarlierVersion(
  doc: DocumentPort,
  table: string,
  job: string,
  operation: { kind: string; payload: unknown },
): Promise<void> {
  await doc.send(
    new PutCommand({
      TableName: table,
      Item: {
        pk: job,
        sk: operationKey(999_999, 0),
        attempts: 0,
        kind: operation.kind,
        payload: JSON.stringify(operation.payload),
      },
    }),
  );
}
