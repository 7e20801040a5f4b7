import type { DistributorConfig } from '../../lib/config/distributor';
import { createDistributorService, warningReport } from '../../lib/distributor/service';

/** The distributor's own service on a bench vhost and embedded DynamoDB; its warnings go to the progress lines. */
export function benchDistributor(config: DistributorConfig, progress: (line: string) => void, fetchFn?: typeof fetch) {
  process.env.AWS_ACCESS_KEY_ID ??= 'local'; // dynalite accepts any credentials; the SDK wants some
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
  const report = warningReport((message, details) =>
    progress(`distributor warned: ${message} ${JSON.stringify(details)}`),
  );
  return createDistributorService(config, report, { fetch: fetchFn });
}
