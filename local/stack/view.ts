import { renderTables } from '../cli/output';
import type { Snapshot } from './snapshot';
import type { Trends } from './trends';

/** What the view adds to a snapshot: the trend lines, and why the picture is stale if it is. */
export interface ViewState {
  trends: Trends;
  /** Set while the last snapshot could not be taken: the picture shown is the one taken at `since`. */
  stale?: { since: number; error: string };
}

/** Adds a fresh snapshot's figures to the trend lines (one sample per snapshot). */
export function recordTrends(trends: Trends, snapshot: Snapshot): void {
  for (const t of snapshot.tenants) {
    trends.add(`wait:${t.tenant}`, t.waitSeconds);
    trends.add(`moved:${t.tenant}`, t.movedPerSecond);
  }
}

/** The live terminal view: the whole screen redrawn in place (ANSI), no dependencies. */
export function renderView(snapshot: Snapshot, notes: readonly string[], state: ViewState): string {
  const d = snapshot.distributor;
  const r = snapshot.registry;
  const header =
    `Fairway local stack — ${snapshot.elapsedSeconds} s real, ~${snapshot.simulatedMinutes} min simulated (speed ×${snapshot.speed})` +
    '   Ctrl-C stops everything';
  const stale = state.stale
    ? [
        `STALE: the last picture, from ${Math.round((Date.now() - state.stale.since) / 1000)} s ago; ` +
          `a service did not answer: ${state.stale.error.slice(0, 100)}`,
      ]
    : [];
  const window = Math.round(snapshot.rateWindowSeconds);
  // While a distributor execution runs, the rates end at its last logged pass.
  const lag = Math.round((Date.parse(snapshot.takenAt) - Date.parse(snapshot.rateWindowEnd)) / 1000);
  const scale = (figure: string, unit: string) => `${Math.round(state.trends.scale(`${figure}:`) * 10) / 10}${unit}`;
  const body = renderTables([
    {
      title:
        `Tenants (level 1 is served first; moved/s and processed/s over the ${window} s to ${lag > 0 ? `${lag} s ago` : 'now'}; ` +
        'wait: the longest in staging when the distributor last measured it, as `fairway tenants` shows it, and how long ago; ' +
        `trends share a scale: a full bar is ${scale('moved', '/s')} moved, ${scale('wait', ' s')} waited)`,
      rows: snapshot.tenants.map((t) => ({
        tenant: t.tenant,
        level: t.level,
        count: t.count,
        sent: t.sent,
        routed: t.routed,
        staged: t.staged,
        'moved/s': t.movedPerSecond,
        'moved/s trend': state.trends.line(`moved:${t.tenant}`),
        'processed/s': t.processedPerSecond,
        'wait (s)': t.waitSeconds ?? (t.staged > 0 ? 'not yet' : '–'),
        'measured (s ago)': t.waitAgeSeconds,
        'wait trend': state.trends.line(`wait:${t.tenant}`),
        processed: t.processed,
      })),
    },
    {
      title:
        `Distributor: ${d?.invocations ?? 0} scheduled passes, ${d?.errors ?? 0} failed, ${d?.skipped ?? 0} skipped (still running); ` +
        `${snapshot.passesOnDemand} passes on demand so far; ` +
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
  return [header, ...stale, '', body, '', ...notes].join('\n');
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
