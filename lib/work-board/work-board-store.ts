import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type DocumentPort, isConditionFailure, retryingThrottled } from '../platform/aws';
import { type Board, MAX_SLOTS, parseBoard, type Served, TargetClauses, WORK_BOARD_KEY } from './work-board';

/**
 * The condition that the board's version is still `version`: a board no router has written yet has
 * no version (read as 0), which is unchanged too.
 */
const versionUnchanged = (version: number): string =>
  version === 0 ? '(attribute_not_exists(version) OR version = :version)' : 'version = :version';

/** Targets per request or round write: an update expression is at most 4 KB. */
const TARGETS_PER_WRITE = 40;

/** How an execution that leaves may rely on the others (see `leave`). */
export type LeaveRule = 'version-or-others' | 'others-only';

/** The work board in DISTRIBUTOR_TABLE (work-board.ts); every call is retried with back-off when throttled. */
export class DynamoWorkBoard {
  private readonly doc: DocumentPort;

  constructor(
    doc: DocumentPort,
    private readonly table: string,
  ) {
    this.doc = retryingThrottled(doc);
  }

  /**
   * A router's request: `req:<target>` = the new version for each target, in one update (more
   * only past TARGETS_PER_WRITE targets). Answers the board after it.
   */
  async request(targets: readonly string[]): Promise<Board> {
    let board = parseBoard(undefined);
    for (let i = 0; i < targets.length || i === 0; i += TARGETS_PER_WRITE) {
      const chunk = targets.slice(i, i + TARGETS_PER_WRITE);
      const names: Record<string, string> = {};
      const sets = chunk.map((target, j) => {
        names[`#r${j}`] = `req:${target}`;
        return `#r${j} = if_not_exists(version, :zero) + :one`;
      });
      const { Attributes } = await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: WORK_BOARD_KEY },
          // Every operand is the item before the update: each req gets the version this update makes.
          UpdateExpression: `SET ${['version = if_not_exists(version, :zero) + :one', ...sets].join(', ')}`,
          ...(chunk.length > 0 ? { ExpressionAttributeNames: names } : {}),
          ExpressionAttributeValues: { ':zero': 0, ':one': 1 },
          ReturnValues: 'ALL_NEW',
        }),
      );
      board = parseBoard(Attributes);
    }
    return board;
  }

  /** The board, read consistently. */
  async read(): Promise<Board> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: { pk: WORK_BOARD_KEY }, ConsistentRead: true }),
    );
    return parseBoard(Item);
  }

  /**
   * Marks an execution as starting until `until`, if none is starting and no slot is held (a slot
   * claimed since the caller's read included): true if the caller must now start it.
   */
  markStarting(now: number, until: number): Promise<boolean> {
    const names: Record<string, string> = {};
    const free = Array.from({ length: MAX_SLOTS }, (_, slot) => {
      names[`#e${slot}`] = `exec:${slot}`;
      return `(attribute_not_exists(#e${slot}) OR #e${slot} <= :now)`;
    });
    return this.conditional({
      UpdateExpression: 'SET starting = :until',
      ConditionExpression: ['(attribute_not_exists(starting) OR starting <= :now)', ...free].join(' AND '),
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ':now': now, ':until': until },
    });
  }

  /** Clears a starting mark whose start failed, so that the next request starts one at once. */
  async clearStarting(until: number): Promise<void> {
    await this.conditional({
      UpdateExpression: 'REMOVE starting',
      ConditionExpression: 'starting = :until',
      ExpressionAttributeValues: { ':until': until },
    });
  }

  /**
   * Claims a free slot among `maxExecutions` until `until` (clearing `starting`: the start it
   * stood for has come), trying them in turn without a read first (the usual case, none held, is
   * one request). Answers the slot and the board, or undefined when every slot is held.
   */
  async claimSlot(
    maxExecutions: number,
    now: number,
    until: number,
  ): Promise<{ slot: number; board: Board } | undefined> {
    for (let slot = 0; slot < maxExecutions; slot++) {
      const board = await this.conditionalBoard({
        UpdateExpression: 'SET #e = :until REMOVE starting',
        ConditionExpression: 'attribute_not_exists(#e) OR #e <= :now',
        ExpressionAttributeNames: { '#e': `exec:${slot}` },
        ExpressionAttributeValues: { ':now': now, ':until': until },
      });
      if (board) return { slot, board };
    }
    return undefined;
  }

  /** Renews the slot until `until` if it is still the caller's (`held`: the until it last wrote) or free. */
  renewSlot(slot: number, held: number, now: number, until: number): Promise<boolean> {
    return this.conditional({
      UpdateExpression: 'SET #e = :until',
      ConditionExpression: '#e = :held OR attribute_not_exists(#e) OR #e <= :now',
      ExpressionAttributeNames: { '#e': `exec:${slot}` },
      ExpressionAttributeValues: { ':held': held, ':now': now, ':until': until },
    });
  }

  /**
   * Writes a round's `served`, `due` and `grant` per target (one update for up to TARGETS_PER_WRITE
   * targets; an undefined due or grant is removed), and answers the board after it (the next round
   * reads no more). With `grantIfVersion`, a part that grants is written only while the board's
   * version is still that one: a request since (a router staged while the target was not granted)
   * would make the target due and revoke the new grant at once; that part is then written again
   * without its grants, and the target is passed next round with no revocation to wait out.
   */
  async writeServed(served: readonly Served[], grantIfVersion?: number): Promise<Board> {
    if (served.length === 0) return this.read();
    const clauses = (entry: Served, j: number, update: TargetClauses) => {
      update.set(`served:${entry.target}`, `s${j}`, entry.served);
      update.setOrRemove(`due:${entry.target}`, `d${j}`, entry.due);
      update.setOrRemove(`grant:${entry.target}`, `g${j}`, entry.grant);
      update.setOrRemove(`grantWait:${entry.target}`, `w${j}`, entry.grant === undefined ? undefined : entry.grantWait);
    };
    let board = parseBoard(undefined);
    for (let i = 0; i < served.length; i += TARGETS_PER_WRITE) {
      const part = served.slice(i, i + TARGETS_PER_WRITE);
      if (grantIfVersion === undefined || part.every((entry) => entry.grant === undefined)) {
        board = await this.updateTargets(part, clauses);
        continue;
      }
      try {
        board = await this.updateTargets(part, clauses, {
          expression: versionUnchanged(grantIfVersion),
          values: { ':version': grantIfVersion },
        });
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        board = await this.updateTargets(
          part.map(({ grant: _, grantWait: __, ...rest }) => rest),
          clauses,
        );
      }
    }
    return board;
  }

  /**
   * Revokes the targets' grants: removes each `grant:<target>` and makes the target due at `due`
   * (after the routers' read and publish windows), in one update; answers the board after it.
   */
  revoke(targets: readonly string[], due: number): Promise<Board> {
    return this.updateTargets(targets, (target, j, update) => {
      update.set(`due:${target}`, `d${j}`, due);
      update.setOrRemove(`grant:${target}`, `g${j}`, undefined);
      update.setOrRemove(`grantWait:${target}`, `w${j}`, undefined);
    });
  }

  /**
   * The live-or-not grants of `targets` (epoch ms until), read consistently with a projection of
   * their `grant:` attributes alone (a router's read: the rest of the board is not its concern).
   */
  async grants(targets: readonly string[]): Promise<Map<string, number>> {
    const found = new Map<string, number>();
    for (let i = 0; i < targets.length; i += TARGETS_PER_WRITE) {
      const chunk = targets.slice(i, i + TARGETS_PER_WRITE);
      const names = Object.fromEntries(chunk.map((target, j) => [`#g${j}`, `grant:${target}`]));
      const { Item } = await this.doc.send(
        new GetCommand({
          TableName: this.table,
          Key: { pk: WORK_BOARD_KEY },
          ConsistentRead: true,
          ProjectionExpression: Object.keys(names).join(', '),
          ExpressionAttributeNames: names,
        }),
      );
      for (const [target, entry] of parseBoard(Item).targets)
        if (entry.grant !== undefined) found.set(target, entry.grant);
    }
    return found;
  }

  /** One update per TARGETS_PER_WRITE entries of SET and REMOVE clauses on target attributes; answers the board after the last. */
  private async updateTargets<T>(
    entries: readonly T[],
    clauses: (entry: T, j: number, update: TargetClauses) => void,
    condition?: { expression: string; values: Record<string, number> },
  ): Promise<Board> {
    if (entries.length === 0) return this.read();
    let board = parseBoard(undefined);
    for (let i = 0; i < entries.length; i += TARGETS_PER_WRITE) {
      const update = new TargetClauses();
      entries.slice(i, i + TARGETS_PER_WRITE).forEach((entry, j) => {
        clauses(entry, j, update);
      });
      const { Attributes } = await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: WORK_BOARD_KEY },
          UpdateExpression: update.expression(),
          ExpressionAttributeNames: update.names,
          ...(condition ? { ConditionExpression: condition.expression } : {}),
          ...(Object.keys(update.values).length > 0 || condition
            ? { ExpressionAttributeValues: { ...update.values, ...condition?.values } }
            : {}),
          ReturnValues: 'ALL_NEW',
        }),
      );
      board = parseBoard(Attributes);
    }
    return board;
  }

  /**
   * Frees `slot` if no request can be stranded: the version is still `version` (no request since
   * the holder's last read), or (`version-or-others`, and alone for `others-only`) another slot
   * of `maxExecutions` is held beyond `now`, whose holder reads the board again before it leaves.
   * False: read again and go on.
   */
  leave(slot: number, rule: LeaveRule, version: number, maxExecutions: number, now: number): Promise<boolean> {
    const names: Record<string, string> = { '#e': `exec:${slot}` };
    const others = Array.from({ length: maxExecutions }, (_, i) => i)
      .filter((i) => i !== slot)
      .map((i) => {
        names[`#o${i}`] = `exec:${i}`;
        return `#o${i} > :now`;
      });
    const versionClause = rule === 'version-or-others' ? [versionUnchanged(version)] : [];
    const clauses = [...versionClause, ...others];
    if (clauses.length === 0) return Promise.resolve(false);
    return this.conditional({
      UpdateExpression: 'REMOVE #e',
      ConditionExpression: clauses.join(' OR '),
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ':now': now, ...(rule === 'version-or-others' ? { ':version': version } : {}) },
    });
  }

  /** Frees `slot` at once; with `until`, for a successor the caller starts now (`starting` until then). */
  async handOff(slot: number, until?: number): Promise<void> {
    await this.doc.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { pk: WORK_BOARD_KEY },
        UpdateExpression: until === undefined ? 'REMOVE #e' : 'SET starting = :until REMOVE #e',
        ExpressionAttributeNames: { '#e': `exec:${slot}` },
        ...(until === undefined ? {} : { ExpressionAttributeValues: { ':until': until } }),
      }),
    );
  }

  /** Takes the backstop listing's turn: true if no listing was taken in the last `intervalMs`. */
  takeListing(now: number, intervalMs: number): Promise<boolean> {
    return this.conditional({
      UpdateExpression: 'SET listedAt = :now',
      ConditionExpression: 'attribute_not_exists(listedAt) OR listedAt <= :since',
      ExpressionAttributeValues: { ':now': now, ':since': now - intervalMs },
    });
  }

  private async conditional(update: Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName' | 'Key'>) {
    return (await this.conditionalBoard(update)) !== undefined;
  }

  private async conditionalBoard(
    update: Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName' | 'Key'>,
  ): Promise<Board | undefined> {
    try {
      const { Attributes } = await this.doc.send(
        new UpdateCommand({ TableName: this.table, Key: { pk: WORK_BOARD_KEY }, ReturnValues: 'ALL_NEW', ...update }),
      );
      return parseBoard(Attributes);
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }
}
