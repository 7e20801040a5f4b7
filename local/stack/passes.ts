import type { PassSummary } from '../../lib/distributor/report';

/** A distributor pass as the local stack saw it end: its summary, and when its log line was written. */
export interface RecentPass {
  at: number;
  summary: PassSummary;
}

/**
 * Takes the distributor's `Distribution pass` log lines (lib/wiring/distributor.ts) out of the
 * functions' output as each is written, so that each pass is placed at the time it ended. An
 * execution's summary comes only when the execution ends, which would put all its passes there.
 */
export class PassTap {
  private partial = '';

  constructor(private readonly onPass: (summary: PassSummary, at: number) => void) {}

  write(chunk: string | Uint8Array, now = Date.now()): void {
    const lines = (this.partial + (typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'))).split(
      '\n',
    );
    this.partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.includes('"Distribution pass"')) continue;
      try {
        const entry = JSON.parse(line) as { message?: string; pass?: PassSummary };
        if (entry.message === 'Distribution pass' && entry.pass) this.onPass(entry.pass, now);
      } catch {
        // Not a log line of the distributor's (a line of another function that names it).
      }
    }
  }
}

/** What each tenant's worker had processed at a moment. */
interface WorkerSample {
  at: number;
  processed: ReadonlyMap<string, number>;
}

/**
 * The view's rates over one window: messages moved per second by the passes that ended in it, and
 * processed per second by the workers in it, both over the same span (at most `windowMs`, less
 * just after start-up). Samples of the workers' counts are taken by `sample`, one a second or so.
 */
export class RateWindow {
  private readonly passes: RecentPass[] = [];
  private readonly samples: WorkerSample[] = [];

  constructor(
    readonly windowMs: number,
    private readonly startedAt: number,
  ) {}

  addPass(summary: PassSummary, at: number): void {
    this.passes.push({ at, summary });
  }

  sample(processed: ReadonlyMap<string, number>, at: number): void {
    this.samples.push({ at, processed: new Map(processed) });
    this.prune(at);
  }

  /** The span the rates cover, ending `now`: from the oldest sample within the window (or the start). */
  span(now: number): { from: number; seconds: number; base: ReadonlyMap<string, number> } {
    this.prune(now);
    const first = this.samples[0];
    const from = first?.at ?? this.startedAt;
    return { from, seconds: Math.max(0.001, (now - from) / 1000), base: first?.processed ?? new Map() };
  }

  /** Messages the passes that ended after `from` moved out of the staging queues `counts` names (reaped since or not). */
  moved(counts: (stagingQueue: string) => boolean, from: number): number {
    let moved = 0;
    for (const pass of this.passes) {
      if (pass.at <= from) continue;
      for (const target of pass.summary.targets) {
        for (const q of target.queues) if (counts(q.name)) moved += q.moved;
      }
    }
    return moved;
  }

  /** Drops the samples older than the window (one is kept), and the passes that ended before the oldest kept. */
  private prune(now: number): void {
    const since = now - this.windowMs;
    while (this.samples.length > 1 && this.samples[0]!.at < since) this.samples.shift();
    const from = this.samples[0]?.at ?? this.startedAt;
    while (this.passes.length > 0 && this.passes[0]!.at <= from) this.passes.shift();
  }
}

/** A rate to a tenth. Pure. */
export const perSecond = (count: number, seconds: number) => Math.round((count / seconds) * 10) / 10;
