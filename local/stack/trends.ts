import type { RecentPass } from './snapshot';

const BARS = '▁▂▃▄▅▆▇█';

/**
 * A small trend line: one bar per value, scaled to the largest (all zeros: the lowest bar); a value
 * not known (undefined) is a blank. Pure.
 */
export function sparkline(values: readonly (number | undefined)[]): string {
  const max = Math.max(0, ...values.map((v) => v ?? 0));
  return values
    .map((v) => {
      if (v === undefined) return ' ';
      if (max === 0) return BARS[0];
      return BARS[Math.min(BARS.length - 1, Math.floor((v / max) * (BARS.length - 1) + 0.5))];
    })
    .join('');
}

/**
 * A tenant's wait in staging as measured: the longest wait of its messages that the latest pass
 * that moved any of them measured (lib/distributor/waits.ts), in seconds to a tenth. Undefined
 * when no recent pass measured one: nothing moved, or only messages routed before the stamp. Pure.
 */
export function measuredWait(recentPasses: readonly RecentPass[], queues: ReadonlySet<string>): number | undefined {
  for (let i = recentPasses.length - 1; i >= 0; i--) {
    const waits = recentPasses[i]!.summary.targets.flatMap((t) =>
      t.queues.filter((q) => queues.has(q.name) && q.wait !== undefined).map((q) => q.wait!.maxMs),
    );
    if (waits.length > 0) return Math.round(Math.max(...waits) / 100) / 10;
  }
  return undefined;
}

/** The last `length` values of a few figures per tenant, one sample per redraw of the view. */
export class Trends {
  private readonly series = new Map<string, (number | undefined)[]>();

  constructor(private readonly length = 20) {}

  add(key: string, value: number | undefined): void {
    const values = this.series.get(key) ?? [];
    values.push(value);
    if (values.length > this.length) values.shift();
    this.series.set(key, values);
  }

  line(key: string): string {
    return sparkline(this.series.get(key) ?? []);
  }
}
