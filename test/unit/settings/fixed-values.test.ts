import { DISTRIBUTOR_TUNING } from '../../../lib/distributor/config';
import { ROUTER_TUNING } from '../../../lib/routing/config';
import {
  DIRECT_ROUTING_WINDOWS,
  LONGEST_ROUTER_BATCH_SECONDS,
  REAP_AFTER_MS,
  REAP_MARGIN_SECONDS,
  STAGING_TOUCH_MS,
} from '../../../lib/settings/common';

/**
 * Issue 35: the rules that cold start checked between settings, now that the values are fixed in
 * the code (docs/configuration.md "Fixed values"), hold between the constants.
 */
describe('the fixed values keep the rules the settings were checked against', () => {
  it('a grant outlasts a router’s read and publish windows (a router uses one only with both ahead)', () => {
    expect(DIRECT_ROUTING_WINDOWS.grantMs).toBeGreaterThan(
      DIRECT_ROUTING_WINDOWS.readMs + DIRECT_ROUTING_WINDOWS.publishMs,
    );
  });

  it('an execution waits out both windows after a revocation within its wait bound', () => {
    expect(DIRECT_ROUTING_WINDOWS.readMs + DIRECT_ROUTING_WINDOWS.publishMs).toBeLessThanOrEqual(
      DISTRIBUTOR_TUNING.waitBoundMs,
    );
  });

  it('a reaper never deletes a queue a router may still publish to without touching its record', () => {
    expect(REAP_AFTER_MS).toBeGreaterThanOrEqual(
      STAGING_TOUCH_MS + (LONGEST_ROUTER_BATCH_SECONDS + REAP_MARGIN_SECONDS) * 1000,
    );
  });

  it('follow-ups back off from their delay, and the longest stays below the schedule’s minute', () => {
    expect(DISTRIBUTOR_TUNING.followUpMaxDelayMs).toBeGreaterThanOrEqual(DISTRIBUTOR_TUNING.followUpDelayMs);
    expect(DISTRIBUTOR_TUNING.followUpMaxDelayMs).toBeLessThan(60_000);
  });

  it('both functions read the same windows, touch period and grace', () => {
    expect(ROUTER_TUNING.direct).toBe(DISTRIBUTOR_TUNING.direct);
    expect(ROUTER_TUNING.requestGraceMs).toBe(DISTRIBUTOR_TUNING.requestGraceMs);
    expect(ROUTER_TUNING.stagingTouchMs).toBe(STAGING_TOUCH_MS);
    expect(DISTRIBUTOR_TUNING.reapAfterMs).toBe(REAP_AFTER_MS);
  });

  it('a pass keeps its safety margin within the distributor’s 60 s timeout (serverless.yml)', () => {
    expect(DISTRIBUTOR_TUNING.safetyMarginMs).toBeLessThan(60_000 / 2);
  });
});
