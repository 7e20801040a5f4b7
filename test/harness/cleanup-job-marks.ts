import type { JobMarks } from '../../lib/cleanup/engine/job-definition';

/** A job's marks in memory, moved only forward as the engine's are, for operations run without a stack. */
export function memoryMarks(): JobMarks & { recorded: Map<string, Date> } {
  const recorded = new Map<string, Date>();
  return {
    recorded,
    get: async (name) => recorded.get(name),
    async advance(name, at) {
      const last = recorded.get(name);
      if (last === undefined || last < at) recorded.set(name, at);
    },
  };
}

/** Marks that keep nothing: every fill is as the first, for tests of what one fill's operations do. */
export const noMarks: JobMarks = { get: async () => undefined, advance: async () => undefined };
