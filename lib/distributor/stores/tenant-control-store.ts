import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { isConditionFailure } from '../../aws/dynamo';
import { FairwayError } from '../../errors';
import type { TenantControl, TenantControlStore, TenantControls } from '../planning/tenant-controls';

/** One item of DISTRIBUTOR_TABLE holds every control, so a pass reads them all in one consistent read. */
export const TENANT_CONTROLS_KEY = 'tenant-controls';

const controlsItem = z.object({
  controls: z.record(
    z.string(),
    z.object({ paused: z.boolean().optional(), weight: z.number().min(0).max(1000).optional() }),
  ),
  version: z.number().int().min(0),
});

/** A change to one key: `weight: null` clears the weight; a control left empty is removed. */
export interface ControlChange {
  paused?: boolean;
  weight?: number | null;
}

/**
 * Tenant controls in the distributor's state table (key `pk` = TENANT_CONTROLS_KEY): the
 * distributor reads, the CLI writes with an optimistic lock on `version`, so two operators'
 * changes never overwrite each other.
 */
export class DynamoTenantControlStore implements TenantControlStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly maxAttempts = 5,
  ) {}

  async read(): Promise<TenantControls> {
    return (await this.readItem()).controls;
  }

  /** Applies `change` to `key` (`tenant` or `tenant/workflow`) and returns what it now holds. */
  async update(key: string, change: ControlChange, nowMs = Date.now()): Promise<TenantControl> {
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      const item = await this.readItem();
      const control: TenantControl = { ...item.controls[key] };
      if (change.paused !== undefined) {
        if (change.paused) control.paused = true;
        else delete control.paused;
      }
      if (change.weight === null) delete control.weight;
      else if (change.weight !== undefined) control.weight = change.weight;
      const controls = { ...item.controls };
      if (Object.keys(control).length === 0) delete controls[key];
      else controls[key] = control;
      try {
        await this.doc.send(
          new PutCommand({
            TableName: this.table,
            Item: { pk: TENANT_CONTROLS_KEY, controls, version: item.version + 1, updatedAt: nowMs },
            ConditionExpression: 'attribute_not_exists(pk) OR version = :version',
            ExpressionAttributeValues: { ':version': item.version },
          }),
        );
        return control;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
    }
    throw new FairwayError(
      `The tenant controls in ${this.table} kept changing under ${this.maxAttempts} attempts; try again`,
    );
  }

  private async readItem(): Promise<z.infer<typeof controlsItem>> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: { pk: TENANT_CONTROLS_KEY }, ConsistentRead: true }),
    );
    if (Item === undefined) return { controls: {}, version: 0 };
    const parsed = controlsItem.safeParse(Item);
    if (!parsed.success) {
      const fields = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
      throw new FairwayError(
        `The item ${TENANT_CONTROLS_KEY} in ${this.table} is malformed (${fields}); fix or delete it (deleting resumes every tenant).`,
      );
    }
    return parsed.data;
  }
}
