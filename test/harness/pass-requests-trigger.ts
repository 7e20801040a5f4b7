import type { PassTrigger, WorkEvent } from '../../lib/work-board/pass-trigger';

/**
 * Runs each started execution in this process, as Lambda would run an async invoke: later, on its
 * own, its outcome reported to no one but `settled`. For tests and in-process tools.
 */
export function inProcessPassTrigger(
  run: (event: WorkEvent) => Promise<unknown>,
  settled: (event: WorkEvent, error?: unknown) => void = () => undefined,
): PassTrigger & { idle(): Promise<void> } {
  const running = new Set<Promise<void>>();
  return {
    async start(event) {
      const invocation = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => run(event))
        .then(
          () => settled(event),
          (error: unknown) => settled(event, error),
        )
        .finally(() => running.delete(invocation));
      running.add(invocation);
    },
    /** Resolves once no started execution is running (executions they start included). */
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}
