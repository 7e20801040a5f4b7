import { Pool } from 'pg';
import { DEFAULT_DOCUMENT_TYPES, generateRegistry } from '../../test/harness/cleanup-registry';
import {
  deceasedDocumentIds,
  expiredDocumentIds,
  type OracleRule,
  repositoryDeletableIds,
} from '../../test/harness/cleanup-registry-oracle';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../embedded-postgres';
import { demoRetention } from './environment';

/** Figures of the demo registry the view shows and the acceptance test checks. */
export interface RegistryFigures {
  documents: number;
  /** Documents the SPEC says must go now (expired, or of a deceased citizen): the jobs' work left. */
  eligible: number;
  /** Deletions recorded in NXRG that OpenXDS has not caught up with. */
  repositoryPending: number;
  deletedBy: Record<string, number>;
}

/**
 * NXRG and OpenXDS as two embedded PostgreSQL databases (PGlite), seeded with the jobs' registry
 * generator (test/harness/cleanup-registry.ts) and checked with its SQL oracle, written from the SPEC alone.
 */
export class DemoRegistry {
  private constructor(
    private readonly servers: EmbeddedPostgres[],
    readonly nxrg: Pool,
    readonly openxds: Pool,
    readonly documentTypes: readonly string[],
    private readonly seededAt: Date,
  ) {}

  static async start(sizes = { documents: 3_000, citizens: 400 }): Promise<DemoRegistry> {
    const servers = await Promise.all([startEmbeddedPostgres(), startEmbeddedPostgres()]);
    const [nxrg, openxds] = servers.map((s) => new Pool({ connectionString: s.url, max: 2 })) as [Pool, Pool];
    const now = new Date();
    await generateRegistry(nxrg, openxds, { seed: 'npm-start', ...sizes, now });
    return new DemoRegistry(servers, nxrg, openxds, DEFAULT_DOCUMENT_TYPES, now);
  }

  get urls() {
    return { nxrgUrl: this.servers[0]!.url, openxdsUrl: this.servers[1]!.url };
  }

  async figures(now = new Date()): Promise<RegistryFigures> {
    const rules: OracleRule[] = Object.entries(demoRetention).map(([documentType, rule]) => ({
      documentType,
      retentionDays: rule.retentionDays,
      basis: 'basis' in rule ? rule.basis : 'created',
    }));
    const [expired, deceased, pending, documents, deleted] = await Promise.all([
      expiredDocumentIds(this.nxrg, rules, now),
      deceasedDocumentIds(this.nxrg),
      repositoryDeletableIds(this.nxrg, this.openxds),
      this.nxrg.query<{ n: number }>('SELECT count(*)::int AS n FROM documents'),
      // The registry jobs record their deletions by job name; the repository job stamps OpenXDS's.
      this.nxrg.query<{ reason: string; n: number }>(
        `SELECT reason, count(*)::int AS n FROM deleted_documents WHERE reason <> 'earlier' GROUP BY reason
         UNION ALL
         SELECT 'repository-cleanup', count(*)::int FROM deleted_documents WHERE openxds_deleted_at >= $1`,
        [this.seededAt],
      ),
    ]);
    return {
      documents: documents.rows[0]!.n,
      eligible: new Set([...expired, ...deceased]).size,
      repositoryPending: pending.length,
      deletedBy: Object.fromEntries(deleted.rows.map((r) => [r.reason, r.n])),
    };
  }

  async stop(): Promise<void> {
    await Promise.all([this.nxrg.end(), this.openxds.end()]);
    await Promise.all(this.servers.map((s) => s.stop()));
  }
}
