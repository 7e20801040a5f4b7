import { z } from 'zod';
import type { JobDefinition, Operation, OperationKind } from '../engine/job-definition';
import type { TimeCursor } from '../nxrg/tables';
import type { ExpiredDocuments, ExpiryRule } from '../nxrg/timebased';
import type { JobReport } from '../report';
import type { DocumentTypeRule, TimebasedJobConfig } from './config';
import { deleteRanges } from './range-rounds';

export const TIMEBASED_JOB = 'registry-timebased-cleanup';

const DAY_MS = 86_400_000;

const typeBasedPayload = z.object({
  documentType: z.string().min(1),
  /** Keyset cursor: the end of the last range this operation's chain deleted, or null to start at the oldest. */
  after: z.object({ at: z.string().min(1), id: z.string().min(1) }).nullable(),
});

export interface TimebasedJobDeps {
  config: Pick<TimebasedJobConfig, 'documentTypes' | 'maxDeletesPerStep'>;
  registry: Pick<ExpiredDocuments, 'expiredRangeEnd' | 'deleteExpiredRange'>;
  report: JobReport;
}

/**
 * registry-timebased-cleanup (SPEC §4): default → one type-based operation per configured document
 * type, which deletes that type's expired documents itself, range by range in (time, id) order: each
 * range is the next `batchSize` documents past retention (type, time and id bounds, so the stack holds
 * two keys, never a list of ids), deleted by one statement that re-checks type and retention. It keeps
 * going while the invocation's time budget and the per-step cap allow, then pushes a continuation
 * carrying the cursor, so one step per scheduled invocation drains as fast as the database deletes.
 */
export function timebasedJob({ config, registry, report }: TimebasedJobDeps): JobDefinition {
  const rules = new Map(config.documentTypes.map((rule) => [rule.documentType, rule]));

  const defaultKind: OperationKind<Record<string, never>> = {
    payload: z.object({}).strict() as z.ZodType<Record<string, never>>,
    async execute() {
      return config.documentTypes.map((rule) => typeBased({ documentType: rule.documentType, after: null }));
    },
  };

  return {
    name: TIMEBASED_JOB,
    defaultOperation: { kind: 'default', payload: {} },
    kinds: { default: defaultKind, 'type-based': typeBasedKind({ config, registry, report }, rules) },
  };
}

/** The type-based operation: deletes one document type's expired documents, range by range, under its rule as configured now. */
function typeBasedKind(
  { config, registry, report }: TimebasedJobDeps,
  rules: ReadonlyMap<string, DocumentTypeRule>,
): OperationKind<z.infer<typeof typeBasedPayload>> {
  return {
    payload: typeBasedPayload,
    async execute({ documentType, after }, context) {
      // The rule as configured now: a type removed from the configuration is no longer deleted.
      const rule = rules.get(documentType);
      if (!rule) {
        report.dropped({ job: TIMEBASED_JOB, documentType });
        return [];
      }
      // The end of the range after this one, walked on another connection while this one is deleted.
      let ahead: { after: TimeCursor; end: Promise<TimeCursor | null> } | undefined;
      try {
        const next = await deleteRanges<TimeCursor>(context, {
          after,
          size: rule.batchSize,
          cap: config.maxDeletesPerStep,
          report,
          async round(cursor, deletion) {
            // Retention is re-computed for every range, from the time the range is deleted (the DELETE's
            // re-check). An end walked ahead counted from the round before: the same end as one walked
            // now, or none (the range then runs to this cutoff) if fewer than a batch were expired then.
            const current = expiry(rule, deletion.at);
            const walked = ahead?.after === cursor ? ahead.end : undefined;
            const through = await (walked ?? registry.expiredRangeEnd(current, cursor, rule.batchSize));
            if (through === null) ahead = undefined;
            else {
              ahead = { after: through, end: registry.expiredRangeEnd(current, through, rule.batchSize) };
              // Awaited by the next round or when the step ends; its failure must not go unhandled meanwhile.
              ahead.end.catch(() => undefined);
            }
            const range = { after: cursor, through };
            const deleted = await registry.deleteExpiredRange(current, range, { reason: TIMEBASED_JOB, ...deletion });
            return { through, deleted };
          },
        });
        return next === null ? [] : [typeBased({ documentType, after: next })];
      } finally {
        // A walk for a round that will not come (the step stops or failed): no statement outlives the step.
        await ahead?.end.catch(() => undefined);
      }
    },
  };
}

/** The rule's expiry as of `now`. */
const expiry = (rule: DocumentTypeRule, now: Date): ExpiryRule => ({
  documentType: rule.documentType,
  basis: rule.basis,
  cutoff: new Date(now.getTime() - rule.retentionDays * DAY_MS),
});

function typeBased(payload: z.infer<typeof typeBasedPayload>): Operation {
  return { kind: 'type-based', payload };
}
