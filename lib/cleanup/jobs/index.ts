import type { CleanupConfig } from '../../config/cleanup';
import type { JobDefinition } from '../engine/types';

export const cleanupJobNames = ['registry-timebased-cleanup', 'registry-status90-cleanup', 'repository-cleanup'] as const;
export type CleanupJobName = (typeof cleanupJobNames)[number];

/** The job registry: the definition each cleanup function runs. No job has operations registered yet (issue #6). */
export function cleanupJob(name: CleanupJobName, _config: CleanupConfig): JobDefinition {
  return { name, defaultOperation: { kind: 'default', payload: {} }, kinds: {} };
}
