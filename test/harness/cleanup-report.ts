import type { CleanupReport } from '../../lib/cleanup/report';

/** A cleanup report that keeps nothing, for tests that look at the databases instead. */
export const silentCleanupReport: CleanupReport = {
  stepped: () => undefined,
  stepFailed: () => undefined,
  deleted: () => undefined,
  dropped: () => undefined,
  connectionFailed: () => undefined,
};
