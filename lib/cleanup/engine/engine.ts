import { randomUUID } from 'node:crypto';
import { errorText } from '../../platform/errors';
import { decodeOperation, type EncodedOperation, encodeChildren, type PushPlan, placeChildren } from './codec';
import type { JobDefinition, OperationContext } from './job-definition';
import { fillGeneration, isFillKey } from './keys';
import { drawSeed, type Random } from './random';
import type { Candidate, StackRecord } from './stack-record';
import { type Claim, type DocumentPort, StackStore } from './stack-store';

export interface EngineSettings {
  /** Passed to every operation: count what would be deleted, delete nothing. */
  dryRun: boolean;
  /** Attempts before an operation is dead-lettered (a failure, or a claim that never finished). */
  maxAttempts: number;
  /** How long a claim holds; must exceed the longest step (the Lambda timeout). */
  leaseMs: number;
  /** Cap on one child's JSON payload, below DynamoDB's 400 KB item limit. */
  maxPayloadBytes: number;
  /** Items read per Query when looking for something to claim (default 25). */
  pageSize?: number;
  /** Pages searched before a step gives up as busy (default 2). */
  pagesSearched?: number;
  /** Children per BatchWriteItem (at most 25, DynamoDB's limit; default 25). */
  batchSize?: number;
}

export interface EngineAdapters {
  doc: DocumentPort;
  table: string;
  /** Shuffles children and spreads contending invocations; seed it in tests. */
  random?: Random;
  /** Epoch milliseconds; leases compare against it. */
  clock?: () => number;
}

export type StepOutcome =
  /** Ran an operation that supplied nothing (it deleted, or found nothing to do). */
  | 'executed'
  /** Ran an operation (or the default operation, `fill: true`) and pushed its children. */
  | 'supplied'
  /** The operation threw; it stays on the stack with its error for another attempt. */
  | 'failed'
  /** The operation was set aside in the dead-letter partition with its error. */
  | 'dead-lettered'
  /** The step's lease expired and another invocation took the operation over. */
  | 'lease-lost'
  /** Everything in view is claimed by other invocations or waits for its parent. */
  | 'busy'
  /** The job has no operation kinds registered yet, so nothing was touched. */
  | 'no-operations';

/** What one step did: the engine's answer, and the structured log line of the step. */
export interface StepResult {
  job: string;
  outcome: StepOutcome;
  /** The operation's kind and key, when one was claimed. */
  kind?: string;
  sk?: string;
  /** True when the step ran the default operation to fill an empty stack. */
  fill?: boolean;
  attempts?: number;
  children: number;
  error?: string;
  dryRun: boolean;
  durationMs: number;
}

type Finished = Omit<StepResult, 'job' | 'dryRun' | 'durationMs'>;

/** Parents known to be off the stack; bounded because a container may live for days. */
const SETTLED_PARENTS_KEPT = 10_000;
/** Steps an engine keeps picking at random after it lost a race for a claim. */
const CONTENDED_STEPS = 20;
/** How long a view of the stack is trusted, and how many of its operations a step tries before reading the stack again. */
const VIEW_FRESH_MS = 2_000;
const VIEW_TRIES = 2;

/**
 * The cleanup engine of one job (SPEC §4, DESIGN.md "State and concurrency"). `step()` does one
 * step: if the stack is empty, the default operation fills it; otherwise it claims the top
 * operation it can, executes it, pushes what it supplies in random order, and removes it.
 */
export function createCleanupEngine(job: JobDefinition, settings: EngineSettings, adapters: EngineAdapters) {
  const random = adapters.random ?? Math.random;
  const clock = adapters.clock ?? Date.now;
  const pageSize = settings.pageSize ?? 25;
  const pagesSearched = settings.pagesSearched ?? 2;
  const store = new StackStore(adapters.doc, adapters.table, job.name, Math.min(settings.batchSize ?? 25, 25));
  const unconfigured = Object.keys(job.kinds).length === 0;
  // Checked once, at cold start: a job whose default operation cannot be stored is a programming error.
  const defaultOperation: EncodedOperation | undefined = unconfigured
    ? undefined
    : encodeChildren('(default)', [job.defaultOperation], job.kinds, settings.maxPayloadBytes)[0];
  const settledParents = new Set<string>();
  // The unclaimed operations this engine last saw below the one it claimed: its next step tries
  // them first while fresh, which saves a Query per step when one invocation takes several.
  let view: { candidates: Candidate[]; at: number } = { candidates: [], at: 0 };
  // Steps left in which this engine picks at random near the top, because it recently lost a race for a claim.
  let contendedSteps = 0;
  const context: OperationContext = {
    job: job.name,
    dryRun: settings.dryRun,
    now: () => new Date(clock()),
    marks: {
      get: async (name) => {
        const at = await store.marks.get(name);
        return at === undefined ? undefined : new Date(at);
      },
      advance: (name, at) => store.marks.advance(name, at.getTime()),
    },
  };

  /** One step; `deadline` (epoch ms) is when the invocation's time budget ends, offered to the operation. */
  async function step(deadline?: number): Promise<StepResult> {
    const started = clock();
    const stepContext: OperationContext =
      deadline === undefined ? context : { ...context, timeLeftMs: () => deadline - clock() };
    const finished = unconfigured ? { outcome: 'no-operations' as const, children: 0 } : await claimAndRun(stepContext);
    return { job: job.name, ...finished, dryRun: settings.dryRun, durationMs: clock() - started };
  }

  async function claimAndRun(stepContext: OperationContext): Promise<Finished> {
    const claim: Claim = { owner: randomUUID(), now: clock(), leaseUntil: 0 };
    claim.leaseUntil = claim.now + settings.leaseMs;
    if (contendedSteps > 0) contendedSteps--;
    const item = await claimNext(claim);
    return item ? run(item, claim, stepContext) : { outcome: 'busy', children: 0 };
  }

  async function claimNext(claim: Claim): Promise<StackRecord | undefined> {
    if (view.candidates.length > 0 && claim.now - view.at < VIEW_FRESH_MS) {
      const claimed = await claimFrom(view.candidates, claim, new Set(), VIEW_TRIES);
      if (claimed) return claimed;
    }
    view = { candidates: [], at: claim.now };
    let page = await store.reads.topOperations(pageSize);
    if (page.items.length === 0) {
      // Read the latest fill before looking at the stack again: a fill that starts after this
      // read either shows up in the second look or makes our own fill's conditional put fail.
      const latest = await store.reads.latestFill();
      if (latest && !latest.done) return store.claims.claim(latest.sk, claim);
      page = await store.reads.topOperations(pageSize);
      if (page.items.length === 0) {
        const generation = latest ? fillGeneration(latest.sk) + 1 : 1;
        return store.claims.createFill(generation, defaultOperation!, claim);
      }
    }
    const waitingParents = new Set<string>();
    for (let searched = 1; ; searched++) {
      const candidates = page.items.filter((item) => !((item.leaseUntil ?? 0) >= claim.now));
      const claimed = await claimFrom(candidates, claim, waitingParents, Infinity);
      if (claimed) view = { candidates, at: claim.now };
      if (claimed || searched >= pagesSearched || !page.next) return claimed;
      page = await store.reads.topOperations(pageSize, page.next);
    }
  }

  /** Claims one of `candidates` (removing every one it tried from the array), newest first unless contended. */
  async function claimFrom(candidates: Candidate[], claim: Claim, waitingParents: Set<string>, maxTries: number) {
    for (let tries = 0; candidates.length > 0 && tries < maxTries; tries++) {
      // Newest first; while other invocations contend for the top, spread out over what this engine sees.
      const index = contendedSteps > 0 ? Math.floor(random() * candidates.length) : 0;
      const [candidate] = candidates.splice(index, 1) as [Candidate];
      const parent = candidate.parent;
      if (parent !== undefined && !settledParents.has(parent)) {
        if (waitingParents.has(parent)) continue;
        const state = await parentState(parent, claim);
        if (state.taken) return state.taken;
        if (!state.settled) {
          waitingParents.add(parent);
          continue;
        }
      }
      const claimed = await store.claims.claim(candidate.sk, claim);
      if (claimed) return claimed;
      contendedSteps = CONTENDED_STEPS;
    }
    return undefined;
  }

  /**
   * A child may run only once its parent is off the stack (deleted, or a fill marked done):
   * until then a retry of the parent may write it again. A parent whose claim expired
   * mid-push is taken over here, so its half-pushed children never hide it.
   */
  async function parentState(sk: string, claim: Claim): Promise<{ settled: boolean; taken?: StackRecord }> {
    const parent = await store.reads.get(sk);
    if (!parent || parent.done) {
      if (settledParents.size >= SETTLED_PARENTS_KEPT) settledParents.clear();
      settledParents.add(sk);
      return { settled: true };
    }
    if ((parent.leaseUntil ?? 0) >= claim.now) return { settled: false };
    return { settled: false, taken: await store.claims.claim(sk, claim) };
  }

  async function run(item: StackRecord, claim: Claim, stepContext: OperationContext): Promise<Finished> {
    const fill = isFillKey(item.sk);
    const { attempts } = item;
    const decoded = decodeOperation(item, job.kinds);
    const claimed = { kind: decoded.kind, sk: item.sk, fill, attempts };
    const setAside = async (error: string): Promise<Finished> => {
      const removed = await store.deadLetters.setAside(item, claim.owner, fill, error, clock());
      return { ...claimed, outcome: removed ? 'dead-lettered' : 'lease-lost', children: 0, error };
    };

    if (attempts > settings.maxAttempts) {
      const last = item.lastError !== undefined ? `; last error: ${item.lastError}` : '';
      return setAside(`claimed ${attempts - 1} times without finishing (a step crashed or timed out)${last}`);
    }
    if (!decoded.ok) return setAside(decoded.error);

    let children: EncodedOperation[];
    try {
      const supplied = (await decoded.operation.execute(decoded.payload, stepContext)) ?? [];
      children = encodeChildren(decoded.kind, supplied, job.kinds, settings.maxPayloadBytes);
    } catch (caught) {
      const error = errorText(caught);
      if (attempts >= settings.maxAttempts) return setAside(error);
      const released = await store.claims.release(item.sk, claim.owner, error);
      return { ...claimed, outcome: released ? 'failed' : 'lease-lost', children: 0, error };
    }

    if (children.length > 0) {
      view.candidates = []; // the children will be the new top
      const plan = await planFor(item, claim.owner);
      if (!plan) return { ...claimed, outcome: 'lease-lost', children: 0 };
      await store.pushes.push(placeChildren(children, plan, item.sk), clock());
    }
    const removed = await store.claims.finish(item, claim.owner, fill);
    if (!removed) return { ...claimed, outcome: 'lease-lost', children: children.length };
    return { ...claimed, outcome: children.length > 0 ? 'supplied' : 'executed', children: children.length };
  }

  /** The plan a previous attempt recorded, or a new one recorded now; nothing if the lease was lost. */
  async function planFor(item: StackRecord, owner: string): Promise<PushPlan | undefined> {
    if (item.pushSequence !== undefined && item.shuffleSeed !== undefined) {
      return { sequence: item.pushSequence, shuffleSeed: item.shuffleSeed };
    }
    const plan = { sequence: await store.pushes.nextSequence(), shuffleSeed: drawSeed(random) };
    return (await store.pushes.recordPlan(item.sk, owner, plan)) ? plan : undefined;
  }

  return { step };
}
