import { z } from 'zod';
import { identifier } from '../postgres/identifier';

/** The OpenXDS repository table the repository cleanup deletes from (env OPENXDS_NAMES, partial JSON). */
export const openxdsNamesSchema = z.strictObject({
  documents: z
    .strictObject({ table: identifier().default('repository_documents'), id: identifier().default('document_id') })
    .prefault({}),
});

export type OpenxdsNames = z.infer<typeof openxdsNamesSchema>;

export const defaultOpenxdsNames: OpenxdsNames = openxdsNamesSchema.parse({});
