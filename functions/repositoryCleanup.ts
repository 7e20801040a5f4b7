import { cleanupFunction } from '../lib/cleanup/service';

/** One step of the repository-cleanup job per scheduled invocation (SPEC §4). */
export const handler = cleanupFunction('repository-cleanup');
