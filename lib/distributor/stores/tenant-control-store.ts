import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { isConditionFailure } from '../../platform/aws';
import { FairwayError } from '../../platform/errors';
import { weightValue } from '../config';
import type { TenantControl, TenantControlStore, TenantControls } from '../planning/weights';

/** One item of DISTRIBUTOR_TABLE holds every control, so a pass reads them all in one consistent read. */
export const TENANT_CONTROLS_KEY = 'tenant-controls';

/**
 * The item: `entries`, a list of `{ key, paused?, weight? }`. A key is a value, never an attribute
 * name: a tenant id the router accepts (`__proto__`, `constructor`) can be a key. An earlier
 * version wrote a `controls` map by key; it is read the same way, and rewritten as a list on the
 * next change.
 */
const itemShape = z.union([
  z.object({ entries: z.array(z.unknown()), version: z.number().int().min(0) }),
  z.object({ controls: z.record(z.string(), z.unknown()), version: z.number().int().min(0) }),
]);
const controlShape = z.object({ paused: z.boolean().optional(), weight: weightValue.optional() });
const entryShape = controlShape.extend({ key: z.string().min(1) });

/** An entry as stored: parsed when it is well formed, else kept as it was (a change never drops it). */
type Entry = { ok: true; key: string; control: TenantControl } | { ok: false; key?: string; raw: unknown };

/** A change to one key: `weight: null` clears the weight; a control left empty is removed. */
export interface ControlChange {
  paused?: boolean;
  weight?: number | null;
}

export interface TenantControlStoreOptions {
  /** An entry that is not well formed: left out of the controls (the others apply). */
  skipped?: (key: string, problem: string) => void;
  maxAttempts?: number;
}

/**
 * Tenant controls in the distributor's state table (key `pk` = TENANT_CONTROLS_KEY): the
 * distributor reads, the CLI writes with an optimistic lock on `version`, so two operators'
 * changes never overwrite each other. Entries are parsed one by one.
 */
export class DynamoTenantControlStore implements TenantControlStore {
  private readonly maxAttempts: number;

  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly options: TenantControlStoreOptions = {},
  ) {
    this.maxAttempts = options.maxAttempts ?? 5;
  }

  async read(): Promise<TenantControls> {
    const controls: Record<string, TenantControl> = Object.create(null);
    for (const entry of (await this.readItem()).entries) {
      if (!entry.ok) continue;
      if (Object.hasOwn(controls, entry.key)) this.options.skipped?.(entry.key, 'appears twice; the first applies');
      else controls[entry.key] = entry.control;
    }
    return controls;
  }

  /** Applies `change` to `key` (`tenant` or `tenant/workflow`) and returns what it now holds. */
  async update(key: string, change: ControlChange, nowMs = Date.now()): Promise<TenantControl> {
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      const item = await this.readItem();
      const current = item.entries.find((entry) => entry.ok && entry.key === key);
      const control: TenantControl = { ...(current?.ok ? current.control : {}) };
      if (change.paused !== undefined) {
        if (change.paused) control.paused = true;
        else delete control.paused;
      }
      if (change.weight === null) delete control.weight;
      else if (change.weight !== undefined) control.weight = change.weight;
      const others = item.entries.filter((entry) => entry !== current);
      const entries = [
        ...others.map((entry) => (entry.ok ? { key: entry.key, ...entry.control } : entry.raw)),
        ...(Object.keys(control).length === 0 ? [] : [{ key, ...control }]),
      ];
      try {
        await this.doc.send(
          new PutCommand({
            TableName: this.table,
            Item: { pk: TENANT_CONTROLS_KEY, entries, version: item.version + 1, updatedAt: nowMs },
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

  private async readItem(): Promise<{ entries: Entry[]; version: number }> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: { pk: TENANT_CONTROLS_KEY }, ConsistentRead: true }),
    );
    if (Item === undefined) return { entries: [], version: 0 };
    const parsed = itemShape.safeParse(Item);
    if (!parsed.success) {
      throw new FairwayError(
        `The item ${TENANT_CONTROLS_KEY} in ${this.table} has no list of entries and version; fix or delete it (deleting resumes every tenant).`,
      );
    }
    const raw =
      'entries' in parsed.data
        ? parsed.data.entries
        : Object.entries(parsed.data.controls).map(([key, control]) => ({ ...(control as object), key }));
    return { entries: raw.map((entry) => this.parseEntry(entry)), version: parsed.data.version };
  }

  private parseEntry(raw: unknown): Entry {
    const parsed = entryShape.safeParse(raw);
    if (parsed.success) {
      const { key, ...control } = parsed.data;
      return { ok: true, key, control };
    }
    const key = (raw as { key?: unknown } | null)?.key;
    const problem = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    this.options.skipped?.(typeof key === 'string' ? key : '(no key)', problem);
    return { ok: false, ...(typeof key === 'string' ? { key } : {}), raw };
  }
}
