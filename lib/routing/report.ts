import type { StagingDestination } from '../staging/staging-names';
import type { Pending } from './pending';
import { byTenant } from './pending';
import { type FailureKind, failureKinds, type RecordFailure } from './record-failures';
import type { StagingQueuesReport } from './staging-queues';

/** What one batch routed for one tenant: the per-tenant figures live in logs, never in metric dimensions. */
export interface TenantRouted {
  tenant: string;
  documents: number;
  /**
   * The tenant's priority level after its last check in the batch (1 = highest). Not `level`:
   * Powertools reserves that log key for the log level and drops it.
   */
  priorityLevel: number;
}

/** Tenant-less messages one batch routed (missing-tenant policy `route`), kept apart from tenants' figures. */
export interface TenantlessRouted {
  documents: number;
  /** Each destination (staging queue by workflow, or the target) with its count. */
  destinations: Record<string, number>;
}

/** A message whose full staging queue name would pass 255 bytes, and where it went instead. */
export interface NameShortened {
  target: string;
  queue: string;
  shortened: NonNullable<StagingDestination['shortened']>;
}

/** `RoutedDirect`: of `Routed`, published straight to a granted target. */
export type RouterMetric = 'Routed' | 'RoutedDirect' | 'RoutedWithoutTenant' | 'NamesShortened' | FailureKind;

/** Where the router reports; never given a message body. */
export interface RouterReport extends StagingQueuesReport {
  failed(failure: RecordFailure): void;
  counted(metric: RouterMetric, count: number): void;
  tenantRouted(routed: TenantRouted): void;
  tenantlessRouted(routed: TenantlessRouted): void;
  nameShortened(shortened: NameShortened): void;
  /** Messages are staged, but asking for a distributor pass failed: they wait for the schedule's. */
  passRequestFailed(target: string, error: unknown): void;
  /** The batch's grants or the targets' depths could not be read: its messages are staged (docs/router.md "Direct routing"). */
  directRoutingUnread(error: unknown): void;
}

/**
 * Logs and counts what one batch did: each failure, each tenant's routed documents, the tenant-less
 * ones, shortened names. `direct`: those published straight to their target under a grant (no
 * staging queue, so no shortened name).
 */
export function reportBatch(
  report: RouterReport,
  {
    routed,
    direct,
    failures,
  }: { routed: readonly Pending[]; direct: readonly Pending[]; failures: readonly RecordFailure[] },
): void {
  for (const failure of failures) report.failed(failure);
  const all = [...routed, ...direct];
  for (const [tenant, items] of byTenant(all)) {
    report.tenantRouted({ tenant, documents: items.length, priorityLevel: items.at(-1)!.priorityLevel! });
  }
  const tenantless = all.filter((item) => item.message.tenantId === undefined);
  if (tenantless.length > 0) {
    const destinations: Record<string, number> = {};
    const publishedTo = (item: Pending) => (direct.includes(item) ? item.message.target : item.destination);
    for (const item of tenantless) destinations[publishedTo(item)] = (destinations[publishedTo(item)] ?? 0) + 1;
    report.tenantlessRouted({ documents: tenantless.length, destinations });
  }
  const shortened = routed.filter((item) => item.shortened !== undefined);
  for (const item of shortened) {
    report.nameShortened({ target: item.message.target, queue: item.destination, shortened: item.shortened! });
  }
  report.counted('Routed', all.length);
  report.counted('RoutedDirect', direct.length);
  report.counted('RoutedWithoutTenant', tenantless.length);
  report.counted('NamesShortened', shortened.length);
  for (const kind of failureKinds) report.counted(kind, failures.filter((f) => f.kind === kind).length);
}
