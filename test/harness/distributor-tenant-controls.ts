import type { TenantControlStore } from '../../lib/distributor/planning/weights';

/** A store with no tenant controls set: every queue plans with its configured weight. */
export const noControls: TenantControlStore = { read: async () => ({}) };
