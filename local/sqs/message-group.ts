import { createHash } from 'node:crypto';
import { summarizeEvent } from './event-summary';

/** SQS's rule for a MessageGroupId: 1–128 characters, ASCII letters, digits and punctuation. */
const VALID_GROUP_ID = /^[!-~]{1,128}$/;

/**
 * The MessageGroupId of an after-process event on an SQS fair queue: the tenant the router reads
 * from the event (docs/deploying.md), so SQS serves quiet tenants first. A tenant id SQS would
 * refuse (a space, non-ASCII, over 128 characters) becomes `sha256:` and its hash, still one group
 * per tenant. Undefined for a tenant-less event: SQS then treats the message as a tenant of its own.
 */
export function messageGroupId(body: string): string | undefined {
  const { tenant } = summarizeEvent(body);
  if (tenant === undefined || tenant === '') return undefined;
  return VALID_GROUP_ID.test(tenant) ? tenant : `sha256:${createHash('sha256').update(tenant).digest('hex')}`;
}
