import { z } from 'zod';
import type { JobDefinition, Operation, OperationContext, OperationKind } from '../engine/job-definition';
import type {
  DoneIdRange,
  DoneRange,
  PendingRange,
  RemoveCopies,
  RepositoryDeletions,
  Settled,
} from '../nxrg/repository-deletions';
import type { TimeCursor } from '../nxrg/tables';
import type { OpenxdsRepository } from '../openxds/repository';
import type { JobReport } from '../report';
import type { RepositoryJobConfig } from './config';
import { batchDeleteKind, documentIds } from './deletions';
import { deleteRanges, inRounds } from './range-rounds';

export const REPOSITORY_JOB = 'repository-cleanup';

const id = z.string().min(1);
const timeCursor = z.object({ at: z.string().min(1), id });
/**
 * The default operation and its continuations carry the (deleted_at, id) cursor of the next page. A
 * string is the id cursor of a continuation an earlier version left on a deployed stack.
 */
const pendingPayload = z.object({ after: z.union([timeCursor, id]).nullable() });
/**
 * `after`: the (openxds_deleted_at, id) cursor of the next page; a string is the id cursor of a
 * continuation an earlier version left, which starts its pass over. `started`: when the recheck's
 * pass started (the fill that pushed it). A continuation an earlier version left may have none: its
 * pass never counts as finished, so the next fill rechecks again.
 */
const recheckPayload = z.object({ after: z.union([timeCursor, id]).nullable(), started: z.iso.datetime().optional() });
const recheckDonePayload = z.object({ started: z.iso.datetime() });
const settlePayload: z.ZodType<PendingRange> = z.object({ after: timeCursor.nullable(), through: timeCursor });
const resettlePayload: z.ZodType<DoneRange> = z.object({ after: timeCursor.nullable(), through: timeCursor });
/** A range of document ids: only the `resettle` items an earlier version left on a deployed stack. */
const resettleIdPayload: z.ZodType<DoneIdRange> = z.object({ after: id.nullable(), through: id });
/** Id lists: only the `batch-delete` items an earlier version left on a deployed stack (the job pushes ranges). */
const batchDeletePayload = z.object({ ids: documentIds });

export interface RepositoryJobDeps {
  config: Pick<RepositoryJobConfig, 'pageSize' | 'batchSize' | 'maxDeletesPerStep' | 'recheckIntervalMinutes'>;
  registry: Pick<
    RepositoryDeletions,
    | 'pendingRangeEnd'
    | 'doneRepositoryPage'
    | 'settlePendingRange'
    | 'settleDoneRange'
    | 'settleDoneIdRange'
    | 'settleRepositoryDeletions'
  >;
  repository: Pick<OpenxdsRepository, 'presentIds' | 'deleteDocuments'>;
  report: Pick<JobReport, 'deleted'>;
}

/**
 * repository-cleanup (SPEC §4): default → the deletions recorded in NXRG but not yet done in OpenXDS,
 * paged in (deleted_at, id) order → a `settle` per page, a keyset range of up to `pageSize` of them
 * (two keys on the stack, never a list of ids), which deletes in OpenXDS those still deleted in NXRG
 * and marks them done, in rounds of `batchSize` (one NXRG transaction and one OpenXDS statement each)
 * while the invocation's time budget and the per-step cap allow (issue 15).
 *
 * "Not yet deleted in OpenXDS" (seed 001) is a fact about OpenXDS, not about the mark: a copy can
 * come back after its deletion was marked done (a restore, a re-upload). So a fill also pushes a
 * recheck (when one is due, below), which goes through up to a page of the deletions marked done in
 * (openxds_deleted_at, id) order, a batch at a time, asks OpenXDS which of them it holds, and pushes a
 * `resettle` for each keyset range of done deletions holding such copies (issue 12, item 9). That reads every done deletion again, so a fill
 * pushes it only when `recheckIntervalMinutes` have passed since the start of the last pass that
 * finished: its last page pushes a `recheck-done`, which records that start as the job's mark
 * `recheck` beside the stack. A pass that died on the way (dead-lettered) records nothing.
 */
export function repositoryJob(deps: RepositoryJobDeps): JobDefinition {
  const { registry } = deps;
  return {
    name: REPOSITORY_JOB,
    defaultOperation: { kind: 'default', payload: { after: null } },
    kinds: {
      default: pendingKind(deps),
      recheck: recheckKind(deps),
      'recheck-done': recheckDoneKind,
      settle: settleKind<TimeCursor, PendingRange>(deps, 'settle', settlePayload, (...args) =>
        registry.settlePendingRange(...args),
      ),
      resettle: resettleKind(deps),
      'batch-delete': batchDeleteKind(batchDeletePayload, {
        cap: deps.config.maxDeletesPerStep,
        report: deps.report,
        remove: (_batch, ids, deletion) =>
          registry.settleRepositoryDeletions(ids, deletion, (confirmed, stillDeleted) =>
            deps.repository.deleteDocuments(confirmed, deletion.dryRun, stillDeleted),
          ),
      }),
    },
  };
}

/** A fill's page: the pending deletions' next range to settle, the next page, and a recheck when one is due. */
function pendingKind({ config, registry }: RepositoryJobDeps): OperationKind<z.infer<typeof pendingPayload>> {
  return {
    payload: pendingPayload,
    async execute({ after }, context) {
      // An earlier version's id cursor cannot be placed in time order: that fill's page starts over.
      const cursor = typeof after === 'string' ? null : after;
      const end = await registry.pendingRangeEnd(cursor, config.pageSize);
      const children: Operation[] = [];
      if (end) children.push({ kind: 'settle', payload: { after: cursor, through: end.through } });
      if (end?.full) children.push({ kind: 'default', payload: { after: end.through } });
      // The first page of a fill starts a recheck of the deletions already done, when one is due.
      if (after === null && (await recheckDue(config.recheckIntervalMinutes * 60_000, context))) {
        children.push({ kind: 'recheck', payload: { after: null, started: context.now().toISOString() } });
      }
      return children;
    },
  };
}

async function recheckDue(intervalMs: number, context: OperationContext): Promise<boolean> {
  const last = await context.marks.get(recheckMark(context.dryRun));
  return last === undefined || context.now().getTime() - last.getTime() >= intervalMs;
}

/** A recheck's page: resettles for the done deletions whose copies came back, then the next page or its end. */
function recheckKind({
  config,
  registry,
  repository,
}: RepositoryJobDeps): OperationKind<z.infer<typeof recheckPayload>> {
  return {
    payload: recheckPayload,
    async execute({ after, started }, context) {
      const size = Math.min(config.batchSize, config.pageSize);
      const children: Operation[] = [];
      const next = await inRounds<TimeCursor>(context, {
        // An earlier version's id cursor cannot be placed in done order: its pass starts over.
        after: typeof after === 'string' ? null : after,
        size,
        cap: config.pageSize,
        async round(cursor) {
          const done = await registry.doneRepositoryPage(cursor, size);
          const back = new Set(await repository.presentIds([...new Set(done.map((key) => key.id))]));
          for (const range of rangesHolding(done, (key) => back.has(key.id), cursor, size)) {
            children.push({ kind: 'resettle', payload: range });
          }
          return done.length === size ? done.at(-1)! : null;
        },
      });
      if (next !== null) children.push({ kind: 'recheck', payload: { after: next, started } });
      // Pushed beside the last page's resettles: it runs only once they are on the stack.
      else if (started !== undefined) children.push({ kind: 'recheck-done', payload: { started } });
      return children;
    },
  };
}

const recheckDoneKind: OperationKind<z.infer<typeof recheckDonePayload>> = {
  payload: recheckDonePayload,
  async execute({ started }, context) {
    await context.marks.advance(recheckMark(context.dryRun), new Date(started));
    return [];
  },
};

/**
 * A kind that settles one range in rounds of `batchSize` (one NXRG transaction and one OpenXDS
 * statement each) while the time budget and the per-step cap allow, and pushes the rest of the range.
 */
function settleKind<K, R extends { after: K | null }>(
  { config, repository, report }: RepositoryJobDeps,
  kind: string,
  payload: z.ZodType<R>,
  settle: (
    range: R,
    limit: number,
    deletion: { at: Date; dryRun: boolean },
    remove: RemoveCopies,
  ) => Promise<Settled<K>>,
): OperationKind<R> {
  // A round never settles more than the cap: a cap below the batch size shrinks the rounds.
  const size = Math.min(config.batchSize, config.maxDeletesPerStep);
  return {
    payload,
    async execute(range, context: OperationContext) {
      const next = await deleteRanges<K>(context, {
        after: range.after,
        size,
        cap: config.maxDeletesPerStep,
        report,
        operation: kind,
        async round(after, deletion) {
          const { settled, deleted, next } = await settle(
            { ...range, after },
            size,
            deletion,
            (confirmed, stillDeleted) => repository.deleteDocuments(confirmed, deletion.dryRun, stillDeleted),
          );
          return { through: next, deleted, requested: settled.length };
        },
      });
      return next === null ? [] : [{ kind, payload: { ...range, after: next } }];
    },
  };
}

/** A resettle of done deletions whose copies came back, in the time form or the id form it came in. */
function resettleKind(deps: RepositoryJobDeps): OperationKind<DoneRange | DoneIdRange> {
  const { registry } = deps;
  const resettle = settleKind<TimeCursor, DoneRange>(deps, 'resettle', resettlePayload, (...args) =>
    registry.settleDoneRange(...args),
  );
  // Kept in the id form it came in: its continuation is an id range too.
  const resettleIds = settleKind<string, DoneIdRange>(deps, 'resettle', resettleIdPayload, (...args) =>
    registry.settleDoneIdRange(...args),
  );
  return {
    payload: z.union([resettlePayload, resettleIdPayload]),
    execute: (range, context) =>
      isIdRange(range) ? resettleIds.execute(range, context) : resettle.execute(range, context),
  };
}

/** A dry run keeps its own mark: its resettles delete nothing, so its pass must not stand in for a real one. */
const recheckMark = (dryRun: boolean) => (dryRun ? 'recheck-dry-run' : 'recheck');

const isIdRange = (range: DoneRange | DoneIdRange): range is DoneIdRange => typeof range.through === 'string';

/**
 * Keyset ranges (after, through] over a page of done deletions (`done`, in key order after `after`)
 * that cover every key that `back` holds, each spanning at most `size` of the page's keys and ending on
 * one it holds: a range starts just after the done key before its first copy, so it holds few that
 * need nothing.
 */
export function rangesHolding<K>(
  done: readonly K[],
  back: (key: K) => boolean,
  after: K | null,
  size: number,
): { after: K | null; through: K }[] {
  const ranges: { after: K | null; through: K }[] = [];
  let first = -1;
  let last = -1;
  const close = () => ranges.push({ after: first === 0 ? after : done[first - 1]!, through: done[last]! });
  done.forEach((key, i) => {
    if (!back(key)) return;
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
