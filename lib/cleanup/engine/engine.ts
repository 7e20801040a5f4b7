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
  const engine = new CleanupEngine(job, settings, adapters);
  return { step: (deadline?: number) => engine.step(deadline) };
}

/** An engine's state across its steps: its stack store, its last view of the stack, and how contended it is. */
class CleanupEngine {
  private readonly random: Random;
  private readonly clock: () => number;
  private readonly pageSize: number;
  private readonly pagesSearched: number;
  private readonly store: StackStore;
  private readonly unconfigured: boolean;
  private readonly defaultOperation: EncodedOperation | undefined;
  private readonly settledParents = new Set<string>();
  // The unclaimed operations this engine last saw below the one it claimed: its next step tries
  // them first while fresh, which saves a Query per step when one invocation takes several.
  private view: { candidates: Candidate[]; at: number } = { candidates: [], at: 0 };
  // Steps left in which this engine picks at random near the top, because it recently lost a race for a claim.
  private contendedSteps = 0;
  private readonly context: OperationContext;

  constructor(
    private readonly job: JobDefinition,
    private readonly settings: EngineSettings,
    adapters: EngineAdapters,
  ) {
    this.random = adapters.random ?? Math.random;
    this.clock = adapters.clock ?? Date.now;
    this.pageSize = settings.pageSize ?? 25;
    this.pagesSearched = settings.pagesSearched ?? 2;
    const store = new StackStore(adapters.doc, adapters.table, job.name, Math.min(settings.batchSize ?? 25, 25));
    this.store = store;
    this.unconfigured = Object.keys(job.kinds).length === 0;
    // Checked once, at cold start: a job whose default operation cannot be stored is a programming error.
    this.defaultOperation = this.unconfigured
      ? undefined
      : encodeChildren('(default)', [job.defaultOperation], job.kinds, settings.maxPayloadBytes)[0];
    this.context = {
      job: job.name,
      dryRun: settings.dryRun,
      now: () => new Date(this.clock()),
      marks: {
        get: async (name) => {
          const at = await store.marks.get(name);
          return at === undefined ? undefined : new Date(at);
        },
        advance: (name, at) => store.marks.advance(name, at.getTime()),
      },
    };
  }

  /** One step; `deadline` (epoch ms) is when the invocation's time budget ends, offered to the operation. */
  async step(deadline?: number): Promise<StepResult> {
    const started = this.clock();
    const stepContext: OperationContext =
      deadline === undefined ? this.context : { ...this.context, timeLeftMs: () => deadline - this.clock() };
    const finished = this.unconfigured
      ? { outcome: 'no-operations' as const, children: 0 }
      : await this.claimAndRun(stepContext);
    return { job: this.job.name, ...finished, dryRun: this.settings.dryRun, durationMs: this.clock() - started };
  }

  private async claimAndRun(stepContext: OperationContext): Promise<Finished> {
    const claim: Claim = { owner: randomUUID(), now: this.clock(), leaseUntil: 0 };
    claim.leaseUntil = claim.now + this.settings.leaseMs;
    if (this.contendedSteps > 0) this.contendedSteps--;
    const item = await this.claimNext(claim);
    return item ? this.run(item, claim, stepContext) : { outcome: 'busy', children: 0 };
  }

  private async claimNext(claim: Claim): Promise<StackRecord | undefined> {
    if (this.view.candidates.length > 0 && claim.now - this.view.at < VIEW_FRESH_MS) {
      const claimed = await this.claimFrom(this.view.candidates, claim, new Set(), VIEW_TRIES);
      if (claimed) return claimed;
    }
    this.view = { candidates: [], at: claim.now };
    let page = await this.store.reads.topOperations(this.pageSize);
    if (page.items.length === 0) {
      // Read the latest fill before looking at the stack again: a fill that starts after this
      // read either shows up in the second look or makes our own fill's conditional put fail.
      const latest = await this.store.reads.latestFill();
      if (latest && !latest.done) return this.store.claims.claim(latest.sk, claim);
      page = await this.store.reads.topOperations(this.pageSize);
      if (page.items.length === 0) {
        const generation = latest ? fillGeneration(latest.sk) + 1 : 1;
        return this.store.claims.createFill(generation, this.defaultOperation!, claim);
      }
    }
    const waitingParents = new Set<string>();
    for (let searched = 1; ; searched++) {
      const candidates = page.items.filter((item) => !((item.leaseUntil ?? 0) >= claim.now));
      const claimed = await this.claimFrom(candidates, claim, waitingParents, Infinity);
      if (claimed) this.view = { candidates, at: claim.now };
      if (claimed || searched >= this.pagesSearched || !page.next) return claimed;
      page = await this.store.reads.topOperations(this.pageSize, page.next);
    }
  }

  /** Claims one of `candidates` (removing every one it tried from the array), newest first unless contended. */
  private async claimFrom(candidates: Candidate[], claim: Claim, waitingParents: Set<string>, maxTries: number) {
    for (let tries = 0; candidates.length > 0 && tries < maxTries; tries++) {
      // Newest first; while other invocations contend for the top, spread out over what this engine sees.
      const index = this.contendedSteps > 0 ? Math.floor(this.random() * candidates.length) : 0;
      const [candidate] = candidates.splice(index, 1) as [Candidate];
      const parent = candidate.parent;
      if (parent !== undefined && !this.settledParents.has(parent)) {
        if (waitingParents.has(parent)) continue;
        const state = await this.parentState(parent, claim);
        if (state.taken) return state.taken;
        if (!state.settled) {
          waitingParents.add(parent);
          continue;
        }
      }
      const claimed = await this.store.claims.claim(candidate.sk, claim);
      if (claimed) return claimed;
      this.contendedSteps = CONTENDED_STEPS;
    }
    return undefined;
  }

  /**
   * A child may run only once its parent is off the stack (deleted, or a fill marked done):
   * until then a retry of the parent may write it again. A parent whose claim expired
   * mid-push is taken over here, so its half-pushed children never hide it.
   */
  private async parentState(sk: string, claim: Claim): Promise<{ settled: boolean; taken?: StackRecord }> {
    const parent = await this.store.reads.get(sk);
    if (!parent || parent.done) {
      if (this.settledParents.size >= SETTLED_PARENTS_KEPT) this.settledParents.clear();
      this.settledParents.add(sk);
      return { settled: true };
    }
    if ((parent.leaseUntil ?? 0) >= claim.now) return { settled: false };
    return { settled: false, taken: await this.store.claims.claim(sk, claim) };
  }

  private async run(item: StackRecord, claim: Claim, stepContext: OperationContext): Promise<Finished> {
    const fill = isFillKey(item.sk);
    const { attempts } = item;
    const decoded = decodeOperation(item, this.job.kinds);
    const claimed = { kind: decoded.kind, sk: item.sk, fill, attempts };
    const setAside = async (error: string): Promise<Finished> => {
      const removed = await this.store.deadLetters.setAside(item, claim.owner, fill, error, this.clock());
      return { ...claimed, outcome: removed ? 'dead-lettered' : 'lease-lost', children: 0, error };
    };

    if (attempts > this.settings.maxAttempts) {
      const last = item.lastError !== undefined ? `; last error: ${item.lastError}` : '';
      return setAside(`claimed ${attempts - 1} times without finishing (a step crashed or timed out)${last}`);
    }
    if (!decoded.ok) return setAside(decoded.error);

    let children: EncodedOperation[];
    try {
      const supplied = (await decoded.operation.execute(decoded.payload, stepContext)) ?? [];
      children = encodeChildren(decoded.kind, supplied, this.job.kinds, this.settings.maxPayloadBytes);
    } catch (caught) {
      const error = errorText(caught);
      if (attempts >= this.settings.maxAttempts) return setAside(error);
      const released = await this.store.claims.release(item.sk, claim.owner, error);
      return { ...claimed, outcome: released ? 'failed' : 'lease-lost', children: 0, error };
    }

    if (children.length > 0) {
      this.view.candidates = []; // the children will be the new top
      const plan = await this.planFor(item, claim.owner);
      if (!plan) return { ...claimed, outcome: 'lease-lost', children: 0 };
      await this.store.pushes.push(placeChildren(children, plan, item.sk), this.clock());
    }
    const removed = await this.store.claims.finish(item, claim.owner, fill);
    if (!removed) return { ...claimed, outcome: 'lease-lost', children: children.length };
    return { ...claimed, outcome: children.length > 0 ? 'supplied' : 'executed', children: children.length };
  }

  /** The plan a previous attempt recorded, or a new one recorded now; nothing if the lease was lost. */
  private async planFor(item: StackRecord, owner: string): Promise<PushPlan | undefined> {
    if (item.pushSequence !== undefined && item.shuffleSeed !== undefined) {
      return { sequence: item.pushSequence, shuffleSeed: item.shuffleSeed };
    }
    const plan = { sequence: await this.store.pushes.nextSequence(), shuffleSeed: drawSeed(this.random) };
    return (await this.store.pushes.recordPlan(item.sk, owner, plan)) ? plan : undefined;
  }
}
