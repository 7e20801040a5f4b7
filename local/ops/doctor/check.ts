/** One line of `fairway doctor`: what was checked, how it went, and what to do when it failed. */
export interface Check {
  check: string;
  status: 'ok' | 'fail' | 'skipped';
  /** What was found; for a failure also how to fix it. */
  detail: string;
}

export const ok = (check: string, detail: string): Check => ({ check, status: 'ok', detail });
export const fail = (check: string, detail: string): Check => ({ check, status: 'fail', detail });
export const skipped = (check: string, detail: string): Check => ({ check, status: 'skipped', detail });
