import type { ServiceFunction } from '../service';

/** What the view shows per scheduled function. */
export interface ScheduleStats {
  name: string;
  everyMs: number;
  invocations: number;
  errors: number;
  /** Ticks that found the previous invocation still running (EventBridge would overlap them). */
  skipped: number;
  lastResult?: unknown;
  lastError?: string;
}

/**
 * Runs each scheduled function of serverless.yml on its rate divided by `speed`, as EventBridge
 * would. A tick that finds the previous invocation still running is skipped and counted, so a
 * slow step never piles up.
 */
export class Scheduler {
  readonly stats: Map<string, ScheduleStats>;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly running = new Map<string, Promise<void>>();

  constructor(
    private readonly functions: readonly ServiceFunction[],
    speed: number,
    private readonly invoke: (fn: ServiceFunction) => Promise<unknown>,
  ) {
    this.stats = new Map(
      functions.flatMap((fn) =>
        fn.schedule?.enabled
          ? [[fn.name, { name: fn.name, everyMs: fn.schedule.everyMs / speed, invocations: 0, errors: 0, skipped: 0 }]]
          : [],
      ),
    );
  }

  start(): void {
    for (const fn of this.functions) {
      const stats = this.stats.get(fn.name);
      if (!stats) continue;
      this.tick(fn, stats);
      this.timers.push(setInterval(() => this.tick(fn, stats), stats.everyMs));
    }
  }

  /** Stops the timers and waits for invocations in flight. */
  async stop(): Promise<void> {
    for (const timer of this.timers.splice(0)) clearInterval(timer);
    await Promise.all(this.running.values());
  }

  private tick(fn: ServiceFunction, stats: ScheduleStats): void {
    if (this.running.has(fn.name)) {
      stats.skipped++;
      return;
    }
    const run = this.invoke(fn).then(
      (result) => {
        stats.invocations++;
        stats.lastResult = result;
      },
      (error: unknown) => {
        stats.invocations++;
        stats.errors++;
        stats.lastError = error instanceof Error ? error.message : String(error);
      },
    );
    this.running.set(
      fn.name,
      run.finally(() => this.running.delete(fn.name)),
    );
  }
}
