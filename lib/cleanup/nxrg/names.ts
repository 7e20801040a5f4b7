import { z } from 'zod';
import { identifier } from '../postgres/identifier';

const name = (fallback: string) => identifier().default(fallback);

/**
 * The NXRG table and column names the adapter uses. Defaults match infra/sql/nxrg.sql; an existing
 * registry sets only the names that differ (env NXRG_NAMES, partial JSON). Unknown keys are
 * refused: a mistyped one must not leave the job on a default table that may be somebody else's.
 */
export const nxrgNamesSchema = z.strictObject({
  documents: z
    .strictObject({
      table: name('documents'),
      id: name('id'),
      type: name('document_type'),
      citizenId: name('citizen_id'),
      createdAt: name('created_at'),
      serviceTime: name('service_time'),
    })
    .prefault({}),
  citizens: z.strictObject({ table: name('citizens'), cpr: name('cpr'), status: name('status') }).prefault({}),
  /** Written by the registry cleanups, read by the repository cleanup. */
  deletedDocuments: z
    .strictObject({
      table: name('deleted_documents'),
      documentId: name('document_id'),
      deletedAt: name('deleted_at'),
      reason: name('reason'),
      openxdsDeletedAt: name('openxds_deleted_at'),
    })
    .prefault({}),
});

export type NxrgNames = z.infer<typeof nxrgNamesSchema>;

export const defaultNxrgNames: NxrgNames = nxrgNamesSchema.parse({});
