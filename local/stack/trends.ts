const BARS = '▁▂▃▄▅▆▇█';

/**
 * A small trend line: one bar per value, on a scale from 0 to `max` (by default the series' own
 * largest; all zeros: the lowest bar); a value not known (undefined) is a blank. Pure.
 */
export function sparkline(
  values: readonly (number | undefined)[],
  max = Math.max(0, ...values.map((v) => v ?? 0)),
): string {
  return values
    .map((v) => {
      if (v === undefined) return ' ';
      if (max <= 0) return BARS[0];
      return BARS[Math.min(BARS.length - 1, Math.max(0, Math.floor((v / max) * (BARS.length - 1) + 0.5)))];
    })
    .join('');
}

/**
 * The last `length` values of a few figures per tenant, one sample per redraw of the view. Keys are
 * `figure:tenant`; the lines of one figure share a scale (0 to the largest value any tenant's line
 * of it shows), so rows compare and a flat series is drawn at its height, not as full bars.
 */
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
    return sparkline(this.series.get(key) ?? [], this.scale(key));
  }

  /** The top of the scale the lines of `key`'s figure share. */
  scale(key: string): number {
    const figure = `${key.split(':')[0]}:`;
    let max = 0;
    for (const [k, values] of this.series) {
      if (k.startsWith(figure)) for (const v of values) max = Math.max(max, v ?? 0);
    }
    return max;
  }
}
