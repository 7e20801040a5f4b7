import { cleanupFunction } from '../lib/cleanup/service';

/** One step of the registry-timebased-cleanup job per scheduled invocation (SPEC §4). */
export const handler = cleanupFunction('registry-timebased-cleanup');
