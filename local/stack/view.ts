import { renderTables } from '../cli/output';
import type { Snapshot } from './snapshot';

/** The live terminal view: the whole screen redrawn in place (ANSI), no dependencies. */
export function renderView(snapshot: Snapshot, notes: readonly string[]): string {
  const d = snapshot.distributor;
  const r = snapshot.registry;
  const header =
    `Fairway local stack — ${snapshot.elapsedSeconds} s real, ~${snapshot.simulatedMinutes} min simulated (speed ×${snapshot.speed})` +
    '   Ctrl-C stops everything';
  const body = renderTables([
    {
      title:
        'Tenants (level 1 is served first; moved/s over the last 30 s; added latency: wait in staging, staged ÷ moved/s)',
      rows: snapshot.tenants.map((t) => ({
        tenant: t.tenant,
        level: t.level,
        count: t.count,
        sent: t.sent,
        routed: t.routed,
        staged: t.staged,
        'moved/s': t.movedPerSecond,
        'added latency (s)': t.stagingWaitSeconds ?? (t.staged > 0 ? 'stalled' : 0),
        processed: t.processed,
      })),
    },
    {
      title:
        `Distributor: ${d?.invocations ?? 0} scheduled passes, ${d?.errors ?? 0} failed, ${d?.skipped ?? 0} skipped (still running); ` +
        `${snapshot.passesOnDemand} passes on demand in the last 30 s; ` +
        `${snapshot.staging.stagingQueues} staging queues, ${snapshot.staging.reaped} reaped` +
        (d?.lastError ? `\n  last error: ${d.lastError}` : ''),
      rows: [],
      empty: '',
    },
    {
      title: `Cleanup — registry: ${r.documents} documents, ${r.eligible} eligible for deletion, ${r.repositoryPending} pending in OpenXDS`,
      rows: snapshot.jobs.map((j) => ({
        job: j.job,
        stack: j.stackSize,
        'dead letters': j.deadLetters,
        steps: j.steps,
        errors: j.errors,
        deleted: j.deleted,
        'last error': j.lastError?.slice(0, 60),
      })),
    },
  ]);
  return [header, '', body, '', ...notes].join('\n');
}

export const ansi = {
  home: '\x1b[H',
  clearBelow: '\x1b[J',
  clearScreen: '\x1b[2J',
  hideCursor: '\x1b[?25l',
  showCursor: '\x1b[?25h',
  /** Clears what remains of each line, so a shorter redraw leaves no stale characters. */
  eraseLineEnds: (text: string) => text.replace(/\n/g, '\x1b[K\n'),
};
