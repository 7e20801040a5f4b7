/**
 * The work board (docs/distributor.md "Run model"): one item of DISTRIBUTOR_TABLE, `pk` =
 * `work-board`, that says which targets have work and which distributor executions are in flight.
 * Routers write requests on it, executions read it and write what they served. Pure: the rules
 * over a board read; the DynamoDB side is work-board-store.ts.
 *
 * Attributes (top level, so that a write touches only its own):
 * - `version`: a counter every request adds to; a request's `req:<target>` is the version it made.
 * - `req:<target>`: the version of the latest request for the target (a router staged into it).
 * - `served:<target>`: the version an execution read before the target's latest pass: every
 *   request up to it was staged before that pass measured.
 * - `due:<target>`: epoch ms when the target's next pass is wanted (work was left staged).
 * - `grant:<target>`: epoch ms until which routers may publish straight to the target
 *   (DIRECT_ROUTING=granted, grants.ts); written with `served` by the execution that holds its lease.
 * - `grantWait:<target>`: the revocation wait (ms) of the deployment that wrote the grant, which a
 *   revocation waits at least: the windows may have been changed since, or be unknown to the revoker.
 * - `exec:<i>`: epoch ms until which execution slot i is held (the holder's invocation end).
 * - `starting`: epoch ms until which a started execution is expected to claim a slot.
 * - `listedAt`: epoch ms of the latest backstop listing of the vhost.
 */
export const WORK_BOARD_KEY = 'work-board';

/** Execution slots at most (DISTRIBUTOR_MAX_EXECUTIONS' ceiling): a router's start checks every one. */
export const MAX_SLOTS = 10;

export interface BoardTarget {
  req?: number;
  served?: number;
  due?: number;
  /** Routers may publish straight to the target until this epoch ms (grants.ts). */
  grant?: number;
  /** The revocation wait (ms) the grant was written with. */
  grantWait?: number;
}

export interface Board {
  version: number;
  targets: Map<string, BoardTarget>;
  /** Slot index → held until (epoch ms). */
  slots: Map<number, number>;
  starting?: number;
  listedAt?: number;
}

export const EMPTY_BOARD: Board = { version: 0, targets: new Map(), slots: new Map() };

const PREFIXES = {
  'req:': 'req',
  'served:': 'served',
  'due:': 'due',
  'grant:': 'grant',
  'grantWait:': 'grantWait',
} as const;

/** The board as its item holds it; attributes that are not numbers are ignored (a hand edit). */
export function parseBoard(item: Record<string, unknown> | undefined): Board {
  const board: Board = { version: 0, targets: new Map(), slots: new Map() };
  for (const [name, value] of Object.entries(item ?? {})) {
    if (typeof value !== 'number') continue;
    if (name === 'version') board.version = value;
    else if (name === 'starting') board.starting = value;
    else if (name === 'listedAt') board.listedAt = value;
    else if (name.startsWith('exec:')) {
      const slot = Number(name.slice(5));
      if (Number.isInteger(slot) && slot >= 0) board.slots.set(slot, value);
    } else {
      for (const [prefix, field] of Object.entries(PREFIXES)) {
        if (!name.startsWith(prefix)) continue;
        const target = name.slice(prefix.length);
        const entry = board.targets.get(target) ?? {};
        entry[field] = value;
        board.targets.set(target, entry);
      }
    }
  }
  return board;
}

/** Slots held beyond `now` (a killed execution's slot lapses at its invocation's end). */
export function liveSlots(board: Board, now: number): number[] {
  return [...board.slots].filter(([, until]) => until > now).map(([slot]) => slot);
}

/** Whether a router that just wrote its request must start an execution: none holds a slot, none is starting. */
export function needsStart(board: Board, now: number): boolean {
  return liveSlots(board, now).length === 0 && (board.starting ?? 0) <= now;
}

/**
 * Whether a target wants a pass now. A target with a due time waits for it (its next pass reads
 * every staging queue, new requests included: a request does not make a backlogged target's pass
 * come sooner); without one, a request newer than its last pass makes it due.
 */
export function isDue(entry: BoardTarget, now: number): boolean {
  if (entry.due !== undefined) return entry.due <= now;
  return entry.req !== undefined && entry.req > (entry.served ?? -1);
}

/** Targets due now, least recently served first (never served first), then by name. */
export function dueTargets(board: Board, now: number, skip: ReadonlySet<string> = new Set()): string[] {
  return [...board.targets]
    .filter(([target, entry]) => !skip.has(target) && isDue(entry, now))
    .sort(([a, x], [b, y]) => (x.served ?? -1) - (y.served ?? -1) || (a < b ? -1 : 1))
    .map(([target]) => target);
}

/** The earliest time a target not due now becomes due, or undefined when none has a due time. */
export function nextDueAt(board: Board, now: number, skip: ReadonlySet<string> = new Set()): number | undefined {
  let next: number | undefined;
  for (const [target, entry] of board.targets) {
    if (skip.has(target) || entry.due === undefined || entry.due <= now) continue;
    next = next === undefined ? entry.due : Math.min(next, entry.due);
  }
  return next;
}

/** What a round of passes leaves on the board for one target: the version it read, and its next due time. */
export interface Served {
  target: string;
  served: number;
  /** Epoch ms of the next pass wanted; undefined: none (nothing left staged). */
  due?: number;
  /** Epoch ms until which routers may publish to it direct; undefined: no grant (any is removed). */
  grant?: number;
  /** With a grant: the revocation wait it is written with (`grantWait:<target>`). */
  grantWait?: number;
}

/**
 * When the targets' grants, revoked at `at`, can no longer be in use: after the revoker's own wait,
 * or the longest wait a grant among them was written with.
 */
export function revokedDueAt(board: Board, targets: readonly string[], at: number, waitMs: number): number {
  const waits = targets.map((target) => board.targets.get(target)?.grantWait ?? 0);
  return at + Math.max(waitMs, ...waits);
}

/** The grant of a target that is live at `now`, if any. */
export function liveGrant(board: Board, target: string, now: number): number | undefined {
  const grant = board.targets.get(target)?.grant;
  return grant !== undefined && grant > now ? grant : undefined;
}

/** The SET and REMOVE clauses of one update over target attributes, with their names and values. */
export class TargetClauses {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, number> = {};
  private readonly sets: string[] = [];
  private readonly removes: string[] = [];

  set(attribute: string, key: string, value: number): void {
    this.names[`#${key}`] = attribute;
    this.values[`:${key}`] = value;
    this.sets.push(`#${key} = :${key}`);
  }

  setOrRemove(attribute: string, key: string, value: number | undefined): void {
    if (value !== undefined) {
      this.set(attribute, key, value);
      return;
    }
    this.names[`#${key}`] = attribute;
    this.removes.push(`#${key}`);
  }

  expression(): string {
    return [
      ...(this.sets.length > 0 ? [`SET ${this.sets.join(', ')}`] : []),
      ...(this.removes.length > 0 ? [`REMOVE ${this.removes.join(', ')}`] : []),
    ].join(' ');
  }
}
