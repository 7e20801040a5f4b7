import { z } from 'zod';
import { identifier } from '../postgres/identifier';

/** The OpenXDS repository table the repository cleanup deletes from (env OPENXDS_NAMES, partial JSON; an unknown key is a cold-start error, not a silent default). */
export const openxdsNamesSchema = z.strictObject({
  documents: z
    .strictObject({ table: identifier().default('repository_documents'), id: identifier().default('document_id') })
    .prefault({}),
});

export type OpenxdsNames = z.infer<typeof openxdsNamesSchema>;

export const defaultOpenxdsNames: OpenxdsNames = openxdsNamesSchema.parse({});
