import { z } from 'zod';
import type { RepositoryJobConfig } from '../../config/cleanup-jobs';
import type { DoneRange, NxrgRegistry, PendingRange, RemoveCopies, Settled } from '../../nxrg/registry';
import type { OpenxdsRepository } from '../../openxds/repository';
import type { JobDefinition, Operation, OperationContext, OperationKind } from '../engine/job-definition';
import type { JobReport } from '../report';
import { batchDeleteKind, documentIds, keyRanges } from './deletions';

export const REPOSITORY_JOB = 'repository-cleanup';

const id = z.string().min(1);
const timeCursor = z.object({ at: z.string().min(1), id });
/**
 * The default operation and its continuations carry the (deleted_at, id) cursor of the next page. A
 * string is the id cursor of a continuation an earlier version left on a deployed stack.
 */
const pendingPayload = z.object({ after: z.union([timeCursor, id]).nullable() });
const recheckPayload = z.object({ after: id.nullable() });
const settlePayload: z.ZodType<PendingRange> = z.object({ after: timeCursor.nullable(), through: timeCursor });
const resettlePayload: z.ZodType<DoneRange> = z.object({ after: id.nullable(), through: id });
/** Id lists: only the `batch-delete` items an earlier version left on a deployed stack (the job pushes ranges). */
const batchDeletePayload = z.object({ ids: documentIds });

export interface RepositoryJobDeps {
  config: Pick<RepositoryJobConfig, 'pageSize' | 'batchSize' | 'maxDeletesPerStep'>;
  registry: Pick<
    NxrgRegistry,
    | 'pendingRepositoryPage'
    | 'doneRepositoryPage'
    | 'settlePendingRange'
    | 'settleDoneRange'
    | 'settleRepositoryDeletions'
  >;
  repository: Pick<OpenxdsRepository, 'presentIds' | 'deleteDocuments'>;
  report: Pick<JobReport, 'deleted'>;
}

/**
 * repository-cleanup (SPEC §4): default → the deletions recorded in NXRG but not yet done in OpenXDS,
 * paged in (deleted_at, id) order → `settle` operations, each a keyset range of at most `batchSize` of
 * them (two keys on the stack, never a list of ids), which deletes in OpenXDS those still deleted in
 * NXRG and marks them done.
 *
 * "Not yet deleted in OpenXDS" (seed 001) is a fact about OpenXDS, not about the mark: a copy can
 * come back after its deletion was marked done (a restore, a re-upload). So each fill also pushes a
 * recheck, which pages through the deletions marked done in id order, asks OpenXDS which of them it
 * holds, and pushes a `resettle` for each id range of done deletions holding such copies (issue 12, item 9).
 */
export function repositoryJob({ config, registry, repository, report }: RepositoryJobDeps): JobDefinition {
  const pendingKind: OperationKind<z.infer<typeof pendingPayload>> = {
    payload: pendingPayload,
    async execute({ after }) {
      // An earlier version's id cursor cannot be placed in time order: that fill's page starts over.
      const cursor = typeof after === 'string' ? null : after;
      const page = await registry.pendingRepositoryPage(cursor, config.pageSize);
      const children: Operation[] = keyRanges(page, config.batchSize, cursor).map((range) => ({
        kind: 'settle',
        payload: range,
      }));
      if (page.length === config.pageSize) children.push({ kind: 'default', payload: { after: page.at(-1)! } });
      // The first page of a fill starts one recheck of the deletions already done.
      if (after === null) children.push({ kind: 'recheck', payload: { after: null } });
      return children;
    },
  };

  const recheckKind: OperationKind<z.infer<typeof recheckPayload>> = {
    payload: recheckPayload,
    async execute({ after }) {
      const done = await registry.doneRepositoryPage(after, config.pageSize);
      const back = new Set(await repository.presentIds(done));
      const children: Operation[] = rangesHolding(done, back, after, config.batchSize).map((range) => ({
        kind: 'resettle',
        payload: range,
      }));
      if (done.length === config.pageSize) children.push({ kind: 'recheck', payload: { after: done.at(-1)! } });
      return children;
    },
  };

  /** A kind that settles one range, at most the per-step cap of it, and pushes the rest of the range. */
  function settleKind<R extends { after: unknown }>(
    kind: string,
    payload: z.ZodType<R>,
    settle: (
      range: R,
      limit: number,
      deletion: { at: Date; dryRun: boolean },
      remove: RemoveCopies,
    ) => Promise<Settled<R['after']>>,
  ): OperationKind<R> {
    return {
      payload,
      async execute(range, context: OperationContext) {
        const { settled, deleted, next } = await settle(
          range,
          config.maxDeletesPerStep,
          { at: context.now(), dryRun: context.dryRun },
          (confirmed) => repository.deleteDocuments(confirmed, context.dryRun),
        );
        report.deleted({
          job: context.job,
          operation: kind,
          dryRun: context.dryRun,
          requested: settled.length,
          documentIds: deleted,
        });
        return next === null ? [] : [{ kind, payload: { ...range, after: next } }];
      },
    };
  }

  const batchDelete = batchDeleteKind(batchDeletePayload, {
    cap: config.maxDeletesPerStep,
    report,
    remove: (_batch, ids, deletion) =>
      registry.settleRepositoryDeletions(ids, deletion, (confirmed) =>
        repository.deleteDocuments(confirmed, deletion.dryRun),
      ),
  });

  return {
    name: REPOSITORY_JOB,
    defaultOperation: { kind: 'default', payload: { after: null } },
    kinds: {
      default: pendingKind,
      recheck: recheckKind,
      settle: settleKind('settle', settlePayload, (...args) => registry.settlePendingRange(...args)),
      resettle: settleKind('resettle', resettlePayload, (...args) => registry.settleDoneRange(...args)),
      'batch-delete': batchDelete,
    },
  };
}

/**
 * Id ranges (after, through] over a page of done deletions (`done`, in id order after `after`) that
 * cover every id in `back`, each spanning at most `size` of the page's ids and ending on one in
 * `back`: a range starts just after the done id before its first copy, so it holds few that need nothing.
 */
export function rangesHolding(
  done: readonly string[],
  back: ReadonlySet<string>,
  after: string | null,
  size: number,
): DoneRange[] {
  const ranges: DoneRange[] = [];
  let first = -1;
  let last = -1;
  const close = () => ranges.push({ after: first === 0 ? after : done[first - 1]!, through: done[last]! });
  done.forEach((id, i) => {
    if (!back.has(id)) return;
    if (first >= 0 && i - first >= size) {
      close();
      first = -1;
    }
    if (first < 0) first = i;
    last = i;
  });
  if (first >= 0) close();
  return ranges;
}
