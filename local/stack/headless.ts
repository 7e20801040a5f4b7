import { type Snapshot, type SnapshotSources, takeSnapshot } from './snapshot';

/**
 * What `--headless` prints: the state when the end states held (or the time was up), as the view
 * would have shown it then, whether they held, and how long the stack ran
 * once it was up (`--duration` counts from there, not from the start-up).
 */
export type HeadlessResult = Snapshot & {
  settled: boolean;
  uncaughtErrors: number;
  runSeconds: number;
  takenAt: string;
};

const minimumRunMs = 20_000;

/**
 * Runs until the end states hold (or the duration is up), stops the traffic and the schedules
 * (`quiesce`), and gives the final state as JSON; `settled` false tells a script the run did not settle.
 */
export async function runHeadless(run: {
  sources: SnapshotSources;
  startedAt: number;
  durationSeconds: number;
  /** The rates' window (ms): the end states include a full one since the stack was up, so the final rates are of it running. */
  rateWindowMs: number;
  quiesce: () => Promise<void>;
  uncaughtErrors: () => number;
}): Promise<{ settled: boolean; json: string }> {
  const upAt = Date.now();
  const deadline = upAt + run.durationSeconds * 1000;
  let last: Snapshot | undefined;
  let settled = false;
  while (!settled && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(1000, deadline - Date.now()))));
    // A snapshot that fails (RabbitMQ restarting, say) only means: not settled yet.
    const snapshot = await takeSnapshot(run.sources).catch(() => undefined);
    if (snapshot) last = snapshot;
    settled = snapshot !== undefined && isSettled(snapshot, run.startedAt, upAt, run.rateWindowMs);
  }
  // The picture of the running stack: taken after the traffic stopped, its rates would be of the stopping.
  const runSeconds = Math.round((Date.now() - upAt) / 100) / 10;
  await run.quiesce();
  last ??= await takeSnapshot(run.sources);
  const final: HeadlessResult = {
    ...last,
    settled,
    uncaughtErrors: run.uncaughtErrors(),
    runSeconds,
  };
  return { settled, json: `${JSON.stringify(final, null, 2)}\n` };
}

/**
 * The demo's end states: every tenant served, the registry's eligible documents gone, OpenXDS
 * caught up, each stack drained (filled a second time) with no dead letters; after a minimum run
 * so that the tenants' levels reflect their traffic, and once the rates' window holds no start-up.
 */
function isSettled(snapshot: Snapshot, startedAt: number, upAt: number, rateWindowMs: number): boolean {
  return (
    Date.now() - startedAt >= minimumRunMs &&
    Date.parse(snapshot.rateWindowEnd) - upAt >= rateWindowMs &&
    snapshot.tenants.every((t) => t.processed > 0) &&
    snapshot.registry.eligible === 0 &&
    snapshot.registry.repositoryPending === 0 &&
    snapshot.jobs.every((j) => j.fills >= 2 && j.deadLetters === 0)
  );
}
