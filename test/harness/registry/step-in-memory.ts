import type { JobDefinition, Operation, OperationContext } from '../../../lib/cleanup/engine/types';

/**
 * A minimal in-memory stack runner for exercising job definitions against real databases without
 * the DynamoDB engine: the same rules (empty stack → default operation's children; otherwise pop
 * the top, validate its payload, execute, push children in shuffled order). `steppers` workers
 * share the stack, as concurrent invocations would. Returns the number of steps taken.
 */
export async function runToEmpty(
  job: JobDefinition,
  options: { dryRun?: boolean; now: Date; steppers?: number; random?: () => number; maxSteps?: number },
): Promise<number> {
  const stack: Operation[] = [];
  const random = options.random ?? Math.random;
  const context: OperationContext = { job: job.name, dryRun: options.dryRun ?? false, now: () => options.now };
  let steps = 0;
  let running = 0;
  let filled = false;

  const execute = async (op: Operation) => {
    const kind = job.kinds[op.kind];
    if (!kind) throw new Error(`unknown operation kind ${op.kind}`);
    const children = (await kind.execute(kind.payload.parse(op.payload), context)) ?? [];
    stack.push(...shuffle(children, random));
  };

  const worker = async () => {
    for (;;) {
      if (steps >= (options.maxSteps ?? 100_000)) throw new Error('too many steps');
      const op = filled ? stack.pop() : undefined;
      if (!filled) {
        filled = true;
        steps++;
        running++;
        await execute(job.defaultOperation).finally(() => running--);
        continue;
      }
      if (!op) {
        if (running === 0) return;
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      steps++;
      running++;
      await execute(op).finally(() => running--);
    }
  };
  await Promise.all(Array.from({ length: options.steppers ?? 1 }, worker));
  return steps;
}

function shuffle<T>(items: T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
