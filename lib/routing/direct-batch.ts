import { isInDoubt } from '../rabbitmq/connection';
import { readFresh } from '../work-board/grants';
import type { DirectGrants } from './direct-grants';
import type { Pending } from './pending';
import { type Batch, type Publisher, publish, sharedChannel } from './publish-batch';
import type { RouterReport } from './report';

/**
 * Direct routing in a router batch (docs/router.md "Direct routing"), the router's one seam for it:
 * after the priority checks and before anything is staged, the batch's messages whose target is
 * granted and nearly empty are published straight to it and leave the batch; the rest go on to be
 * staged. Decided just before the publish, so a decision never has to be undone.
 */
export function directBatch(direct: DirectGrants, publisher: Publisher, report: RouterReport) {
  return async function routeDirect(batch: Batch): Promise<void> {
    if (!batch.channel) return;
    const chosen = await chooseDirect(direct, batch.pending, publisher.now, report);
    if (chosen.size === 0) return;
    batch.pending = batch.pending.filter((item) => !chosen.has(item));
    // A publish unconfirmed within the publish window fails its record: the distributor's revocation wait counts on it.
    const { routed } = await publish(publisher, batch.channel, [...chosen], batch.failures, {
      retry: false,
      direct: true,
      timeoutMs: direct.settings.publishMs,
    });
    batch.direct.push(...routed);
    // The staged publishes need another shared channel when this one was left in doubt.
    if (isInDoubt(batch.channel)) batch.channel = await sharedChannel(publisher, batch.pending, batch.failures);
  };
}

/**
 * The batch's staged messages that go straight to their granted, nearly empty target, read fresh
 * enough to start their publish now (the read window). A grant or depth that cannot be read stages
 * them all (counted).
 */
async function chooseDirect(
  direct: DirectGrants,
  pending: readonly Pending[],
  now: () => number,
  report: RouterReport,
): Promise<Set<Pending>> {
  const staged = pending.filter((p) => !p.bypass);
  if (staged.length === 0) return new Set();
  try {
    const readAts = await direct.choose(staged.map((p) => p.message.target));
    const at = now();
    return new Set(staged.filter((_, i) => readAts[i] !== undefined && readFresh(readAts[i], at, direct.settings)));
  } catch (error) {
    report.directRoutingUnread(error);
    return new Set();
  }
}
