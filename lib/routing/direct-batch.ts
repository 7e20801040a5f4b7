import { isInDoubt } from '../rabbitmq/connection';
import { readFresh } from '../work-board/grants';
import type { DirectGrants } from './direct-grants';
import { dropFailed, type Pending } from './pending';
import { type Batch, ensureStagingQueues, type Publisher, publish, sharedChannel } from './publish-batch';
import type { RouterReport } from './report';

/** A batch's direct routing: what the router calls at its three points, with `DIRECT_ROUTING=granted`. */
export interface DirectBatch {
  /** Before the staging queues are declared: marks the messages that go direct. */
  choose(batch: Batch): Promise<void>;
  /** After the priority checks: a grant read too long ago stages its messages after all. */
  restageLate(batch: Batch): Promise<void>;
  /** Before the staged publishes: the direct ones, within the grant's publish window. */
  publish(batch: Batch): Promise<void>;
}

/**
 * Direct routing in a router batch (docs/router.md "Direct routing"), the router's one seam for it:
 * a staged message whose target is granted and nearly empty is published straight to it.
 */
export function directBatch(direct: DirectGrants, publisher: Publisher, report: RouterReport): DirectBatch {
  return {
    async choose(batch) {
      if (batch.channel) await chooseDirect(direct, batch.pending, report);
    },
    async restageLate(batch) {
      // Its publish would start too late for the grant.
      const late = batch.pending.filter(
        (p) => p.direct && !readFresh(p.direct.readAt, publisher.now(), direct.settings),
      );
      for (const item of late) stageAfterAll(item);
      const failed = await ensureStagingQueues(publisher.stagingQueues, late);
      batch.pending = dropFailed(batch.pending, failed, batch.failures);
    },
    async publish(batch) {
      const chosen = batch.pending.filter((p) => p.direct);
      if (!batch.channel || chosen.length === 0) return;
      // A publish unconfirmed within the publish window fails its record: the distributor's revocation wait counts on it.
      const { routed } = await publish(
        publisher,
        batch.channel,
        chosen,
        batch.failures,
        false,
        direct.settings.publishMs,
      );
      batch.routed.push(...routed);
      // The staged publishes need another shared channel when this one was left in doubt.
      if (isInDoubt(batch.channel)) {
        batch.channel = await sharedChannel(
          publisher,
          batch.pending.filter((p) => !p.direct),
          batch.failures,
        );
      }
    },
  };
}

/**
 * Marks the batch's staged messages that go straight to their granted, nearly empty target. A grant
 * or depth that cannot be read stages them all (counted).
 */
async function chooseDirect(direct: DirectGrants, pending: readonly Pending[], report: RouterReport): Promise<void> {
  const staged = pending.filter((p) => !p.bypass);
  if (staged.length === 0) return;
  let readAts: (number | undefined)[];
  try {
    readAts = await direct.choose(staged.map((p) => p.message.target));
  } catch (error) {
    report.directRoutingUnread(error);
    return;
  }
  staged.forEach((item, i) => {
    const readAt = readAts[i];
    if (readAt === undefined) return;
    item.direct = { readAt, staged: { destination: item.destination, shortened: item.shortened } };
    item.bypass = true;
    item.destination = item.message.target;
    delete item.shortened;
  });
}

/** A message chosen to go direct whose grant read is too old to start its publish now: back to its staging queue. */
function stageAfterAll(item: Pending): void {
  const { destination, shortened } = item.direct!.staged;
  delete item.direct;
  item.bypass = false;
  item.destination = destination;
  if (shortened === undefined) delete item.shortened;
  else item.shortened = shortened;
}
