import { z } from 'zod';
import type { DocumentTypeRule, TimebasedJobConfig } from '../../config/cleanup-jobs';
import type { ExpiryRule, NxrgRegistry } from '../../nxrg/registry';
import type { JobDefinition, Operation, OperationKind } from '../engine/job-definition';
import type { JobReport } from '../report';
import { batchDeleteKind, chunk, documentIds } from './deletions';

export const TIMEBASED_JOB = 'registry-timebased-cleanup';

const DAY_MS = 86_400_000;

const typeBasedPayload = z.object({
  documentType: z.string().min(1),
  /** Keyset cursor: the last document of the previous page, or null for the first page. */
  after: z.object({ at: z.string().min(1), id: z.string().min(1) }).nullable(),
});
const batchDeletePayload = z.object({ documentType: z.string().min(1), ids: documentIds });

export interface TimebasedJobDeps {
  config: Pick<TimebasedJobConfig, 'documentTypes' | 'pageSize' | 'maxDeletesPerStep'>;
  registry: Pick<NxrgRegistry, 'expiredPage' | 'deleteExpired'>;
  report: JobReport;
}

/**
 * registry-timebased-cleanup (SPEC §4): default → one type-based operation per configured document
 * type → pages of expired document ids → batch deletes that re-check the retention at delete time.
 */
export function timebasedJob({ config, registry, report }: TimebasedJobDeps): JobDefinition {
  const rules = new Map(config.documentTypes.map((rule) => [rule.documentType, rule]));

  /** The rule as configured now: a type removed from the configuration is no longer deleted. */
  const ruleFor = (documentType: string): DocumentTypeRule | undefined => {
    const rule = rules.get(documentType);
    if (!rule) report.dropped({ job: TIMEBASED_JOB, documentType });
    return rule;
  };
  const expiry = (rule: DocumentTypeRule, now: Date): ExpiryRule => ({
    documentType: rule.documentType,
    basis: rule.basis,
    cutoff: new Date(now.getTime() - rule.retentionDays * DAY_MS),
  });

  const defaultKind: OperationKind<Record<string, never>> = {
    payload: z.object({}).strict() as z.ZodType<Record<string, never>>,
    async execute() {
      return config.documentTypes.map((rule) => typeBased({ documentType: rule.documentType, after: null }));
    },
  };

  const typeBasedKind: OperationKind<z.infer<typeof typeBasedPayload>> = {
    payload: typeBasedPayload,
    async execute({ documentType, after }, context) {
      const rule = ruleFor(documentType);
      if (!rule) return [];
      const page = await registry.expiredPage(expiry(rule, context.now()), after, config.pageSize);
      const children: Operation[] = chunk(page.ids, rule.batchSize).map((ids) => ({
        kind: 'batch-delete',
        payload: { documentType, ids },
      }));
      if (page.ids.length === config.pageSize && page.last)
        children.push(typeBased({ documentType, after: page.last }));
      return children;
    },
  };

  const batchDelete = batchDeleteKind(batchDeletePayload, {
    cap: config.maxDeletesPerStep,
    report,
    applies: ({ documentType }) => ruleFor(documentType) !== undefined,
    remove: ({ documentType }, ids, deletion) =>
      registry.deleteExpired(ids, expiry(rules.get(documentType)!, deletion.at), {
        reason: TIMEBASED_JOB,
        ...deletion,
      }),
  });

  return {
    name: TIMEBASED_JOB,
    defaultOperation: { kind: 'default', payload: {} },
    kinds: { default: defaultKind, 'type-based': typeBasedKind, 'batch-delete': batchDelete },
  };
}

function typeBased(payload: z.infer<typeof typeBasedPayload>): Operation {
  return { kind: 'type-based', payload };
}
