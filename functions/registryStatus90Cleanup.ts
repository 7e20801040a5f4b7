import { cleanupFunction } from '../lib/cleanup/service';

/** One step of the registry-status90-cleanup job per scheduled invocation (SPEC §4). */
export const handler = cleanupFunction('registry-status90-cleanup');
