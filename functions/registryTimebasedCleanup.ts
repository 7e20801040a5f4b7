import { cleanupFunction } from '../lib/cleanup/function';

/** One step of the registry-timebased-cleanup job per scheduled invocation (SPEC §4). */
export const handler = cleanupFunction('registry-timebased-cleanup');
