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
 * The distributor's schedule is its backstop: passes come on demand, started by routers when no
 * execution is in flight. Divided by a demo's speed (every 100 ms at 600) a scheduled execution
 * would always be in flight and serve every request itself, which a deployment never sees.
 */
export const DISTRIBUTOR_SCHEDULE_FLOOR_MS = 10_000;

/**
 * Runs each scheduled function of serverless.yml on its rate divided by `speed`, as EventBridge
 * would (the distributor's kept at least DISTRIBUTOR_SCHEDULE_FLOOR_MS apart). A tick that finds
 * the previous invocation still running is skipped and counted, so a slow step never piles up.
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
          ? [[fn.name, { name: fn.name, everyMs: scheduledEveryMs(fn, speed), invocations: 0, errors: 0, skipped: 0 }]]
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

function scheduledEveryMs(fn: ServiceFunction, speed: number): number {
  const everyMs = fn.schedule!.everyMs / speed;
  return fn.name === 'distributor'
    ? Math.max(everyMs, Math.min(fn.schedule!.everyMs, DISTRIBUTOR_SCHEDULE_FLOOR_MS))
    : everyMs;
}
