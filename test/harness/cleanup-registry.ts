import type { Pool } from 'pg';
import { defaultNxrgNames } from '../../lib/cleanup/nxrg/names';
import { nxrgSchemaSql } from '../../lib/cleanup/nxrg/schema';
import { defaultOpenxdsNames } from '../../lib/cleanup/openxds/names';
import { openxdsSchemaSql } from '../../lib/cleanup/openxds/schema';

export interface RegistrySizes {
  /** Seeds every pseudo-random choice: the same seed and sizes give the same registry. */
  seed: string;
  documents: number;
  citizens: number;
  /** Deletions already recorded before the run (half already done in OpenXDS, half pending). */
  earlierDeletions?: number;
  documentTypes?: readonly string[];
  /** The time the data is generated against: documents are spread over the 20 years before it. */
  now: Date;
}

export const DEFAULT_DOCUMENT_TYPES = ['referral', 'lab-result', 'discharge-letter', 'prescription'] as const;

/** Share of citizens with status 90 (deceased), in percent; the others get a mix of living statuses. */
const DECEASED_PERCENT = 15;
/** Share of documents, in percent, whose citizen has no row in the citizens table. */
const UNKNOWN_CITIZEN_PERCENT = 2;
const TWENTY_YEARS_US = 20n * 365n * 86_400n * 1_000_000n;

/** A deterministic pseudo-random 52-bit integer for a key (SQL expression). */
const hash = (key: string) => `(('x' || substr(md5(${key}), 1, 13))::bit(52)::bigint)`;
/** The CPR number of citizen number `i`: unique by its first six digits, a pseudo-random tail. */
const cprOf = (i: string) =>
  `lpad((${i})::text, 6, '0') || lpad((${hash(`$1 || 'tail' || (${i})`)} % 10000)::text, 4, '0')`;

/**
 * Creates the NXRG and OpenXDS tables (default names) and fills them with a seeded pseudo-random
 * registry in a few INSERT … SELECT generate_series statements: citizens with mixed statuses, documents
 * of mixed types and ages (some without a service time, some of citizens without a status row), every
 * document also stored in OpenXDS, and earlier deletions some of which OpenXDS has not caught up with.
 * Plain function of a seed and sizes, for tests, benches and demos.
 */
export async function generateRegistry(nxrg: Pool, openxds: Pool, sizes: RegistrySizes): Promise<void> {
  const { seed, documents, citizens, now } = sizes;
  const types = sizes.documentTypes ?? DEFAULT_DOCUMENT_TYPES;
  const earlier = sizes.earlierDeletions ?? Math.floor(documents / 50);
  await nxrg.query(nxrgSchemaSql(defaultNxrgNames));
  await openxds.query(openxdsSchemaSql(defaultOpenxdsNames));

  await nxrg.query(
    `INSERT INTO citizens (cpr, status)
     SELECT ${cprOf('i')},
            CASE WHEN ${hash(`$1 || 'status' || i`)} % 100 < ${DECEASED_PERCENT} THEN 90
                 ELSE (ARRAY[1, 3, 5, 20, 80])[${hash(`$1 || 'alive' || i`)} % 5 + 1] END
     FROM generate_series(1, $2::int) i`,
    [seed, citizens],
  );
  const citizenSpan = Math.ceil((citizens * (100 + UNKNOWN_CITIZEN_PERCENT)) / 100);
  await nxrg.query(
    `INSERT INTO documents (id, document_type, citizen_id, created_at, service_time)
     SELECT md5($1 || 'doc' || j)::uuid,
            ($3::text[])[${hash(`$1 || 'type' || j`)} % cardinality($3::text[]) + 1],
            ${cprOf(`${hash(`$1 || 'citizen' || j`)} % $4 + 1`)},
            created,
            CASE WHEN ${hash(`$1 || 'svc?' || j`)} % 5 = 0 THEN NULL
                 ELSE created - (${hash(`$1 || 'svc' || j`)} % 31536000000000)::float8 * interval '1 microsecond' END
     FROM generate_series(1, $2::int) j,
          LATERAL (SELECT $5::timestamptz - (${hash(`$1 || 'age' || j`)} % $6::bigint)::float8 * interval '1 microsecond' AS created) t`,
    [seed, documents, types, citizenSpan, now, TWENTY_YEARS_US.toString()],
  );
  await nxrg.query(
    `INSERT INTO deleted_documents (document_id, deleted_at, reason, openxds_deleted_at)
     SELECT md5($1 || 'earlier' || k)::uuid, $3::timestamptz - interval '30 days', 'earlier',
            CASE WHEN k % 2 = 0 THEN $3::timestamptz - interval '29 days' END
     FROM generate_series(1, $2::int) k`,
    [seed, earlier, now],
  );
  const ids = await nxrg.query<{ id: string }>(
    `SELECT id FROM documents UNION ALL SELECT document_id FROM deleted_documents WHERE openxds_deleted_at IS NULL`,
  );
  await openxds.query(`INSERT INTO repository_documents (document_id) SELECT unnest($1::uuid[])`, [
    ids.rows.map((r) => r.id),
  ]);
  await Promise.all([
    nxrg.query('ANALYZE citizens, documents, deleted_documents'),
    openxds.query('ANALYZE repository_documents'),
  ]);
}
