import { afterProcessEvent } from '../lambda-events';
import type { BatchOutcome } from '../sqs/event-source';
import { summarizeEvent } from '../sqs/event-summary';

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
  /** Records that failed on their maxReceiveCount-th receive: SQS moves them to the dead-letter queue. */
  deadLettered: number;
}

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

/**
 * Sends each tenant's documents to the after-process queue, as workers do (`send`: SendMessageBatch
 * through @aws-sdk/client-sqs), and counts what the router made of them from the event source's
 * outcomes (`record`).
 */
export class TrafficGenerator {
  readonly traffic: Map<string, TenantTraffic>;
  private timer?: NodeJS.Timeout;
  private sending?: Promise<void>;
  private readonly nextDue = new Map<string, number>();

  constructor(
    private readonly profiles: readonly TenantProfile[],
    private readonly send: (bodies: string[]) => Promise<void>,
    private readonly maxReceiveCount: number,
    private readonly tickMs = 200,
  ) {
    this.traffic = new Map(profiles.map((p) => [p.tenant, { tenant: p.tenant, sent: 0, routed: 0, deadLettered: 0 }]));
  }

  start(): void {
    const now = Date.now();
    for (const p of this.profiles) this.nextDue.set(p.tenant, now);
    this.timer = setInterval(() => {
      this.sending ??= this.send(this.due(Date.now())).finally(() => (this.sending = undefined));
    }, this.tickMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sending;
  }

  /** One invocation's outcome: routed records, and failed ones on their last receive (the DLQ's next). */
  record({ records, failed }: BatchOutcome): void {
    for (const record of records) {
      const stats = this.traffic.get(summarizeEvent(record.body).tenant ?? '');
      if (!stats) continue;
      if (!failed.has(record.messageId)) stats.routed++;
      else if (Number(record.attributes.ApproximateReceiveCount) >= this.maxReceiveCount) stats.deadLettered++;
    }
  }

  private due(now: number): string[] {
    return this.profiles.flatMap((p) => {
      const documents: string[] = [];
      for (let at = this.nextDue.get(p.tenant)!; at <= now; at += p.everyMs) {
        const stats = this.traffic.get(p.tenant)!;
        stats.sent++;
        const body = JSON.stringify({ tenant: p.tenant, document: stats.sent });
        documents.push(JSON.stringify(afterProcessEvent(p.target, p.tenant, p.workflow, body)));
        this.nextDue.set(p.tenant, at + p.everyMs);
      }
      return documents;
    });
  }
}
