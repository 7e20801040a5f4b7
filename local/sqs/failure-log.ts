import { createReadStream, existsSync } from 'node:fs';
import { createInterface } from 'node:readline';

/** The router's last logged reason for not routing a message (docs/router.md: WARN `After-process event not routed`). */
export interface LoggedFailure {
  kind: string;
  reason: string;
  fields?: string[];
}

const failureMessage = 'After-process event not routed';

/**
 * Reads the router's failure lines from a log of JSON lines (the local stack's log file, or
 * CloudWatch Logs exported as JSON lines), last one per SQS message id. A missing file reads as
 * no failures: the reason is a help, not a requirement.
 */
export async function readFailureReasons(path: string | undefined): Promise<Map<string, LoggedFailure>> {
  const reasons = new Map<string, LoggedFailure>();
  if (!path || !existsSync(path)) return reasons;
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    if (!line.includes(failureMessage)) continue;
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (entry.message !== failureMessage || typeof entry.messageId !== 'string') continue;
    reasons.set(entry.messageId, {
      kind: String(entry.kind),
      reason: String(entry.reason),
      ...(Array.isArray(entry.fields) ? { fields: entry.fields.map(String) } : {}),
    });
  }
  return reasons;
}
