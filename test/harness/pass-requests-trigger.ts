import type { PassRequestEvent, PassTrigger } from '../../lib/pass-requests/pass-trigger';

/**
 * Runs each started pass in this process, as Lambda would run an async invoke: later, on its own,
 * its outcome reported to no one but `settled`. For tests and in-process tools.
 */
export function inProcessPassTrigger(
  run: (event: PassRequestEvent) => Promise<unknown>,
  settled: (event: PassRequestEvent, error?: unknown) => void = () => undefined,
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
    /** Resolves once no started pass is running (passes they start included). */
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}
