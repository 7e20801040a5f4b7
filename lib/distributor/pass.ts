import { randomUUID } from 'node:crypto';
import type { QueueInfo } from '../rabbitmq/management';
import type { QueuePolicies } from '../rabbitmq/queue-policies';
import { channelSlots, concurrencyLimit } from './moving/channels';
import { followUpDelay, moveCostModel } from './planning/budget';
import { groupByTarget, type TargetGroup } from './planning/tenant-backlog';
import {
  controlledWeights,
  someQueueMayWeighZero,
  type TenantControlStore,
  type TenantControls,
  weighingOf,
} from './planning/weights';
import type { PassSummary, TargetSummary } from './report';
import type { StagingSource } from './staging-source';
import { targetPass } from './target-pass';
import type { Pass, TargetPassDeps } from './target-refill';

/** Outcomes of a target the pass did not measure: no drain to learn, no due time of its own. */
const UNPASSED: ReadonlySet<TargetSummary['outcome']> = new Set(['leased-elsewhere', 'granted']);

/** What a pass needs from the outside world; tests pass real adapters on their own vhost and table. */
export interface DistributorDeps extends TargetPassDeps {
  /** One paged management API listing of the vhost (ManagementClient.listQueues): the backstop's. */
  listQueues: () => Promise<QueueInfo[]>;
  /** The vhost's policies and operator policies (ManagementClient.listPolicies). */
  listPolicies: () => Promise<QueuePolicies>;
  /** Operators' run-time controls (`fairway tenants pause|resume|weight`), read once per pass. */
  controls: TenantControlStore;
  /** Named targets' staging queues and shapes without a listing; without it such a pass lists the vhost. */
  staging?: StagingSource;
}

/** The targets of a pass an execution runs, and the work board's version it read before it. */
export interface PassOver {
  targets: readonly string[];
  version: number;
  /** Each target's latest request version on that board (a staging-queue cache older than it is read again). */
  requests?: ReadonlyMap<string, number | undefined>;
  /** Each target's `served` version on that board: the container's last pass is its previous only if it wrote it. */
  served?: ReadonlyMap<string, number | undefined>;
}

/** An execution's passes: leases are taken on first use and held until `close`. */
export interface DistributorSession {
  /** A pass over the named targets, or, with none named, over every target the listing shows staged. */
  pass(over?: PassOver): Promise<PassSummary>;
  /** Closes its channels and gives back every lease it holds; a later pass takes them again. */
  close(): Promise<void>;
  /** Epoch ms after which no mover takes a new delivery (the invocation's end less the safety margin). */
  readonly deadline: number;
  /** Leases it holds now (what leaving would give back). */
  readonly leases: number;
}

export interface Distributor {
  /**
   * One distribution pass in a session of its own; `remainingMs` is the invocation's time left.
   * With a `request`, over its target alone (no listing when the staging source is set).
   */
  runPass(remainingMs: number, request?: { target: string }): Promise<PassSummary>;
  session(remainingMs: number): DistributorSession;
}

/** What the container's passes share: the target pass, and what the last passes left. */
interface Container {
  deps: DistributorDeps;
  now: () => number;
  configuredWeight: ReturnType<typeof weighingOf>;
  distributeTarget: ReturnType<typeof targetPass>;
  /**
   * Per target, what the container's last pass left (and the board version it served at): the
   * next one measures the drain from it, unless another execution served the target in between.
   */
  lastEnds: Map<string, { at: number; left?: number; version: number; delayMs?: number }>;
  /**
   * The controls of the last pass that could read them: an unreadable item never stops distribution.
   * It stops grants (`read: false`): a pause set since may be in it, and routers would pass it by.
   */
  lastControls: TenantControls;
}

/** One execution's session: what its passes share, and when its invocation ends (epoch ms). */
interface Session {
  shared: Pick<Pass, 'owner' | 'deadline' | 'held' | 'rotations' | 'storedRotations' | 'movedBytes' | 'slots'>;
  endsAt: number;
}

/**
 * Builds the distributor from its settings and adapters (SPEC §3): a pass reads the tenant
 * controls, finds its targets' staging queues, and runs the targets' parts (target-pass.ts),
 * `targetConcurrency` at a time (each takes its lease first: lease requests are bounded too).
 */
export function createDistributor(deps: DistributorDeps): Distributor {
  const container: Container = {
    deps,
    now: deps.now ?? Date.now,
    configuredWeight: weighingOf(deps.settings.weights),
    // Learned over the container's passes: a pass moves only what fits before its deadline.
    distributeTarget: targetPass(deps, moveCostModel(deps.settings.moveConcurrency)),
    lastEnds: new Map(),
    lastControls: {},
  };
  const session = (remainingMs: number) => openSession(container, remainingMs);
  return {
    session,
    async runPass(remainingMs, request) {
      const single = session(remainingMs);
      try {
        return await single.pass(request ? { targets: [request.target], version: 0 } : undefined);
      } finally {
        await single.close();
      }
    },
  };
}

function readControls(container: Container): Promise<{ controls: TenantControls; read: boolean }> {
  return container.deps.controls.read().then(
    (controls) => {
      container.lastControls = controls;
      return { controls, read: true };
    },
    (error: unknown) => {
      container.deps.report.controlsUnreadable(error);
      return { controls: container.lastControls, read: false };
    },
  );
}

/** The groups of a pass: named targets from the staging source (or the listing), else every listed target. */
async function groupsOf(
  deps: DistributorDeps,
  over: PassOver | undefined,
): Promise<{ groups: TargetGroup[]; policies: QueuePolicies }> {
  const none: QueuePolicies = { policies: [], operatorPolicies: [] };
  if (over && deps.staging) {
    if (over.targets.length === 0) return { groups: [], policies: none };
    const policies = await deps.staging.policies(deps.listPolicies);
    const limit = concurrencyLimit(deps.settings.targetConcurrency);
    const found = await Promise.all(
      over.targets.map((t) => limit(() => deps.staging!.groupOf(t, policies, over.version, over.requests?.get(t)))),
    );
    return { groups: found.filter((g) => g !== undefined), policies };
  }
  const named = over ? new Set(over.targets) : undefined;
  const listing = await deps.listQueues();
  // Named targets get every staging queue the listing names: its counts lag the router by ~5 s.
  const groups = named ? groupByTarget(listing, named).filter((g) => named.has(g.target)) : groupByTarget(listing);
  // The targets' effective limits come from these; a pass with nothing to move does not ask.
  return { groups, policies: groups.length > 0 ? await deps.listPolicies() : none };
}

/** When each target's next pass is due, from the room it left and the drain since the last pass. */
function scheduleNext(container: Container, target: TargetSummary, at: number, over: PassOver | undefined): void {
  const last = container.lastEnds.get(target.target);
  const previous = last && last.version === (over?.served?.get(target.target) ?? -1) ? last : undefined;
  const drainPerMs =
    previous?.left !== undefined && target.depth !== undefined && at > previous.at
      ? (previous.left - target.depth) / (at - previous.at)
      : undefined;
  const dueInMs = target.busy
    ? 0
    : followUpDelay(
        { ...target, staged: target.staged ?? 0, drainPerMs, previousDelayMs: last?.delayMs },
        container.deps.settings,
      );
  if (dueInMs !== undefined) target.dueInMs = dueInMs;
  const version = over?.version ?? -1;
  // A pass that read no depth leaves no drain to measure from.
  const left = target.depth === undefined ? {} : { left: target.depth + target.moved };
  container.lastEnds.set(target.target, { at, ...left, version, delayMs: dueInMs });
}

function openSession(container: Container, remainingMs: number): DistributorSession {
  const { settings, openChannel } = container.deps;
  const startedAt = container.now();
  const session: Session = {
    shared: {
      owner: randomUUID(),
      deadline: startedAt + Math.max(0, remainingMs - settings.safetyMarginMs),
      held: new Map(),
      rotations: new Map(),
      storedRotations: new Map(),
      movedBytes: new Map(),
      // The movers' channel pairs serve every round of the execution (a broken pair is replaced).
      slots: channelSlots(settings.moveConcurrency, openChannel),
    },
    endsAt: startedAt + remainingMs,
  };
  return {
    deadline: session.shared.deadline,
    get leases() {
      return session.shared.held.size;
    },
    pass: (over) => runOnePass(container, session, over),
    close: () => closeSession(container.deps, session),
  };
}

/** One pass: its targets' groups and the tenant controls, every target's part, then when each is due next. */
async function runOnePass(container: Container, session: Session, over: PassOver | undefined): Promise<PassSummary> {
  const { deps, now } = container;
  const { settings, report } = deps;
  const at = now();
  if (session.shared.deadline <= at) report.noTimeToMove(session.endsAt - at, settings.safetyMarginMs);
  const [{ groups, policies }, { controls, read }] = await Promise.all([groupsOf(deps, over), readControls(container)]);
  const pass: Pass = {
    ...session.shared,
    policies,
    weight: controlledWeights(container.configuredWeight, controls),
    grantsWithheld: !read || someQueueMayWeighZero(settings.weights, controls),
  };
  const limit = concurrencyLimit(settings.targetConcurrency);
  const targets = await Promise.all(groups.map((group) => limit(() => container.distributeTarget(group, pass))));
  for (const target of targets) if (!UNPASSED.has(target.outcome)) scheduleNext(container, target, at, over);
  const total = (figure: 'planned' | 'moved' | 'requeued' | 'parked') => targets.reduce((n, t) => n + t[figure], 0);
  const summary: PassSummary = {
    owner: session.shared.owner,
    planner: settings.planner,
    durationMs: now() - at,
    planned: total('planned'),
    moved: total('moved'),
    requeued: total('requeued'),
    parked: total('parked'),
    targets,
  };
  report.passed(summary);
  return summary;
}

/** Closes the session's channels and gives back every lease it holds. */
async function closeSession(deps: DistributorDeps, { shared }: Session): Promise<void> {
  await shared.slots.close();
  // A lease taken again later may follow another execution's writes.
  shared.rotations.clear();
  const limit = concurrencyLimit(deps.settings.targetConcurrency);
  await Promise.all(
    [...shared.held.keys()].map((target) =>
      limit(() =>
        // An unreleased lease only delays the next execution until it expires.
        deps.leases.releaseLease(target, shared.owner).then(
          () => shared.held.delete(target),
          (error: unknown) => deps.report.leaseNotReleased(target, error),
        ),
      ),
    ),
  );
}
