import { type PassTrigger, WORK_EVENT } from './pass-trigger';
import { needsStart } from './work-board';
import type { DynamoWorkBoard } from './work-board-store';

/**
 * Asks for passes over the targets a router batch staged into (docs/distributor.md "Run model"):
 * `started` when this request started an execution, `queued` when one in flight (or starting) reads
 * it, `off` without passes on demand.
 */
export type RequestWork = (targets: readonly string[]) => Promise<'started' | 'queued' | 'off'>;

export interface WorkRequesterDeps {
  board: Pick<DynamoWorkBoard, 'request' | 'markStarting' | 'clearStarting'>;
  trigger: PassTrigger;
  /** How long a started execution may take to claim a slot before a new request presumes it lost. */
  graceMs: number;
  now?: () => number;
}

/**
 * One board update for the whole batch; an execution is started only when none holds a slot and
 * none is starting, so a storm of batches starts one. A start that fails clears its mark, so the
 * next batch tries again at once.
 */
export function workRequester({ board, trigger, graceMs, now = Date.now }: WorkRequesterDeps): RequestWork {
  return async (targets) => {
    if (targets.length === 0) return 'queued';
    const after = await board.request(targets);
    const at = now();
    if (!needsStart(after, at)) return 'queued';
    const until = at + graceMs;
    if (!(await board.markStarting(at, until))) return 'queued';
    try {
      await trigger.start(WORK_EVENT);
    } catch (error) {
      await board.clearStarting(until).catch(() => undefined);
      throw error;
    }
    return 'started';
  };
}

/** Passes on the schedule alone (no DISTRIBUTOR_FUNCTION_NAME). */
export const schedulesOnly: RequestWork = async () => 'off';
