import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterProcessEvent, sqsEvent } from '../lambda-events';

/** One simulated tenant: it sends a document every `everyMs` (real time). */
export interface TenantProfile {
  tenant: string;
  target: string;
  workflow: string;
  everyMs: number;
}

export interface TenantTraffic {
  tenant: string;
  sent: number;
  routed: number;
  /** Records the router failed five times: on AWS they would be in the dead-letter queue. */
  deadLettered: number;
}

/** SQS redelivers a failed record until its receive count reaches the queue's maxReceiveCount (infra/sqs.yml). */
const maxReceiveCount = 5;
const batchSize = 10;

/**
 * Tenants of very different volumes: one noisy tenant sends many documents a second and must
 * sink; quiet ones send one document at a time, more than the reset interval apart, and must stay
 * at level 1; a steady one sits in between and sinks slowly.
 */
export function demoTenants(target: string, resetIntervalMs: number): TenantProfile[] {
  return [
    { tenant: 'noisy-bulk-scanner', target, workflow: 'ingest', everyMs: 50 },
    { tenant: 'steady-lab', target, workflow: 'ingest', everyMs: 1_000 },
    { tenant: 'quiet-clinic-a', target, workflow: 'ingest', everyMs: Math.round(resetIntervalMs * 1.3) },
    { tenant: 'quiet-clinic-b', target, workflow: 'ingest', everyMs: Math.round(resetIntervalMs * 1.7) },
  ];
}

interface Pending {
  tenant: string;
  body: string;
  receives: number;
}

/**
 * Feeds the router as its SQS event source mapping would: batches of up to ten after-process
 * events, failed records (partial batch response) redelivered until the receive limit.
 */
export class TrafficGenerator {
  readonly traffic: Map<string, TenantTraffic>;
  private timer?: NodeJS.Timeout;
  private sending?: Promise<void>;
  private readonly nextDue = new Map<string, number>();
  private retries: Pending[] = [];

  constructor(
    private readonly profiles: readonly TenantProfile[],
    private readonly router: (event: SQSEvent) => Promise<SQSBatchResponse | undefined>,
    private readonly queueName: string,
    private readonly tickMs = 200,
  ) {
    this.traffic = new Map(profiles.map((p) => [p.tenant, { tenant: p.tenant, sent: 0, routed: 0, deadLettered: 0 }]));
  }

  start(): void {
    const now = Date.now();
    for (const p of this.profiles) this.nextDue.set(p.tenant, now);
    this.timer = setInterval(() => {
      this.sending ??= this.send().finally(() => (this.sending = undefined));
    }, this.tickMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sending;
  }

  private due(now: number): Pending[] {
    return this.profiles.flatMap((p) => {
      const documents: Pending[] = [];
      for (let at = this.nextDue.get(p.tenant)!; at <= now; at += p.everyMs) {
        const stats = this.traffic.get(p.tenant)!;
        stats.sent++;
        const body = JSON.stringify({ tenant: p.tenant, document: stats.sent });
        documents.push({
          tenant: p.tenant,
          body: JSON.stringify(afterProcessEvent(p.target, p.tenant, p.workflow, body)),
          receives: 0,
        });
        this.nextDue.set(p.tenant, at + p.everyMs);
      }
      return documents;
    });
  }

  private async send(): Promise<void> {
    const pending = [...this.retries, ...this.due(Date.now())];
    this.retries = [];
    for (let i = 0; i < pending.length; i += batchSize) {
      const batch = pending.slice(i, i + batchSize);
      const event = sqsEvent(
        batch.map((p) => p.body),
        this.queueName,
      );
      let failedIds: Set<string>;
      try {
        const response = await this.router(event);
        failedIds = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
      } catch {
        failedIds = new Set(event.Records.map((r) => r.messageId)); // a thrown batch is redelivered whole
      }
      event.Records.forEach((record, j) => {
        const item = batch[j]!;
        const stats = this.traffic.get(item.tenant)!;
        if (!failedIds.has(record.messageId)) stats.routed++;
        else if (++item.receives >= maxReceiveCount) stats.deadLettered++;
        else this.retries.push(item);
      });
    }
  }
}
