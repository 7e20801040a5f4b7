import type { PassSummary } from '../../lib/distributor/report';

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

/** A distributor pass as the local stack saw it: its summary, and the span it ran over. */
interface LoggedPass {
  startedAt: number;
  endedAt: number;
  summary: PassSummary;
}

/** What each tenant's worker had processed at a moment. */
interface WorkerSample {
  at: number;
  processed: ReadonlyMap<string, number>;
}

/** The span the rates are over: `seconds` from `from` to `to`. */
export interface RateSpan {
  from: number;
  to: number;
  seconds: number;
}

/**
 * The view's rates over one window, ending when the moves are known up to: messages moved per
 * second by the distributor's passes, each spread over the span it ran (its moves are refills
 * through the pass, not one burst at its log line), and processed per second by the workers over
 * the same span, from their counts sampled at each pass's end and by `sample` (their count at a
 * moment between two samples is interpolated). A pass's moves are logged when it ends, so while an
 * execution runs the window ends at its last pass's end (or its start), not at now.
 */
export class RateWindow {
  private readonly passes: LoggedPass[] = [];
  private readonly samples: WorkerSample[];
  /** The running distributor executions, by an id of each: when their moves are known up to. */
  private readonly running = new Map<string, number>();

  constructor(
    readonly windowMs: number,
    private readonly startedAt: number,
    private readonly processed: () => ReadonlyMap<string, number>,
  ) {
    this.samples = [{ at: startedAt, processed: new Map() }];
  }

  executionStarted(requestId: string, at: number): void {
    this.running.set(requestId, at);
  }

  executionEnded(requestId: string): void {
    this.running.delete(requestId);
  }

  /** A pass that ended `at`, written by the execution `requestId` (its log line's id may be another's: they share a logger). */
  addPass(summary: PassSummary, at: number, requestId?: string): void {
    this.passes.push({ startedAt: at - summary.durationMs, endedAt: at, summary });
    if (requestId !== undefined && this.running.has(requestId)) this.running.set(requestId, at);
    this.sample(at);
  }

  sample(at: number): void {
    this.samples.push({ at, processed: new Map(this.processed()) });
  }

  /** The span the rates cover: the window (less just after start-up) ending when the moves are known up to. */
  span(now: number): RateSpan {
    this.sample(now);
    const to = Math.min(now, ...this.running.values());
    const from = Math.max(this.startedAt, to - this.windowMs);
    this.prune(from);
    return { from, to, seconds: Math.max(0.001, (to - from) / 1000) };
  }

  /** Messages the passes moved in the span out of the staging queues `counts` names (reaped since or not). */
  moved(counts: (stagingQueue: string) => boolean, span: RateSpan): number {
    let moved = 0;
    for (const pass of this.passes) {
      const overlap = Math.min(pass.endedAt, span.to) - Math.max(pass.startedAt, span.from);
      if (overlap < 0 || (overlap === 0 && pass.endedAt > pass.startedAt)) continue;
      const share = pass.endedAt > pass.startedAt ? overlap / (pass.endedAt - pass.startedAt) : 1;
      for (const target of pass.summary.targets) {
        for (const q of target.queues) if (counts(q.name)) moved += q.moved * share;
      }
    }
    return moved;
  }

  /** What the workers processed of `tenant`'s messages in the span. */
  processedIn(tenant: string, span: RateSpan): number {
    return this.countAt(tenant, span.to) - this.countAt(tenant, span.from);
  }

  private countAt(tenant: string, at: number): number {
    let before = this.samples[0]!;
    for (const sample of this.samples) {
      if (sample.at > at) {
        const [a, b] = [before.processed.get(tenant) ?? 0, sample.processed.get(tenant) ?? 0];
        return sample.at === before.at ? b : a + ((b - a) * (at - before.at)) / (sample.at - before.at);
      }
      before = sample;
    }
    return before.processed.get(tenant) ?? 0;
  }

  /** Drops the samples before `from` (the last one before it is kept) and the passes that ended before it. */
  private prune(from: number): void {
    while (this.samples.length > 1 && this.samples[1]!.at <= from) this.samples.shift();
    for (let i = this.passes.length - 1; i >= 0; i--) if (this.passes[i]!.endedAt < from) this.passes.splice(i, 1);
  }
}

/** A rate to a tenth. Pure. */
export const perSecond = (count: number, seconds: number) => Math.round((count / seconds) * 10) / 10;
