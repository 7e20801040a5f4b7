import { z } from 'zod';
import {
  createCleanupEngine,
  type EngineAdapters,
  type EngineSettings,
  type StepResult,
} from '../../lib/cleanup/engine/engine';
import type { JobDefinition, Operation } from '../../lib/cleanup/engine/job-definition';
import { type EmbeddedDynamo, startDynamo } from './dynamo';

/** A tree of operations: a node with children supplies them, a node without is a leaf that "deletes". */
export interface TreeNode {
  id: string;
  children?: TreeNode[];
  /** Supplied as a `poison` operation, which always throws. */
  poison?: true;
}

const treeNode: z.ZodType<TreeNode> = z.lazy(() =>
  z.object({ id: z.string().min(1), children: z.array(treeNode).optional() }),
);

export interface Execution {
  id: string;
  dryRun: boolean;
  start: number;
  end: number;
}

/** What the test job's operations did, in the order they did it. */
export class Recorder {
  readonly leaves: Execution[] = [];
  readonly suppliers: string[] = [];
  /** Start times of the default operation's runs (one per fill). */
  readonly fills: number[] = [];
  /** How many operations each run of the default operation supplied. */
  readonly fillsSupplying: number[] = [];

  runsOf(id: string) {
    return this.leaves.filter((run) => run.id === id);
  }
}

const node = (payload: TreeNode): Operation =>
  payload.poison ? { kind: 'poison', payload: { id: payload.id } } : { kind: 'node', payload };
const now = () => performance.now();

/**
 * A job whose default operation supplies `cycles[i]` on its i-th run (nothing once they are
 * used up) or what `cycles(recorder)` answers, whose `node` operations walk a tree, and whose
 * `poison` operation always throws.
 */
export function testJob(
  name: string,
  recorder: Recorder,
  cycles: TreeNode[][] | ((recorder: Recorder) => TreeNode[]),
): JobDefinition {
  return {
    name,
    defaultOperation: { kind: 'root', payload: {} },
    kinds: {
      root: {
        payload: z.object({}),
        async execute() {
          const cycle = typeof cycles === 'function' ? cycles(recorder) : (cycles[recorder.fills.length] ?? []);
          recorder.fills.push(now());
          recorder.fillsSupplying.push(cycle.length);
          return cycle.map(node);
        },
      },
      node: {
        payload: treeNode,
        async execute(payload: TreeNode, context) {
          if (payload.children) {
            recorder.suppliers.push(payload.id);
            return payload.children.map(node);
          }
          const start = now();
          // Yield so that concurrent steppers interleave inside an execution, not only between them.
          await new Promise((resolve) => setImmediate(resolve));
          recorder.leaves.push({ id: payload.id, dryRun: context.dryRun, start, end: now() });
        },
      },
      poison: {
        payload: z.object({ id: z.string() }),
        async execute(payload: { id: string }) {
          throw new Error(`poison ${payload.id} always fails`);
        },
      },
    },
  };
}

export const leafIds = (nodes: readonly TreeNode[]): string[] =>
  nodes.flatMap((n) => (n.children ? leafIds(n.children) : n.poison ? [] : [n.id]));

export const testSettings: EngineSettings = {
  dryRun: false,
  maxAttempts: 3,
  leaseMs: 60_000,
  maxPayloadBytes: 350_000,
};

export function engineFor(job: JobDefinition, adapters: EngineAdapters, settings: Partial<EngineSettings> = {}) {
  return createCleanupEngine(job, { ...testSettings, ...settings }, adapters);
}

/** Steps until `done()` holds, failing loudly if that takes more than `maxSteps`. */
export async function stepUntil(
  engine: { step(): Promise<StepResult> },
  done: () => boolean,
  maxSteps = 100_000,
): Promise<StepResult[]> {
  const results: StepResult[] = [];
  while (!done()) {
    if (results.length >= maxSteps)
      throw new Error(`not done after ${maxSteps} steps; last: ${JSON.stringify(results.at(-1))}`);
    results.push(await engine.step());
  }
  return results;
}

/** The test file's dynalite with the deployed tables: started before its tests, stopped after them. */
export function useDynamo(): () => EmbeddedDynamo {
  let dynamo: EmbeddedDynamo | undefined;
  beforeAll(async () => {
    dynamo = await startDynamo();
    await dynamo.createTables();
  });
  afterAll(() => dynamo?.stop());
  return () => dynamo!;
}
