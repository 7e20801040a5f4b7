import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '../aws/dynamo';
import { type DocumentPort, retryingThrottled } from '../aws/dynamo-faults';
import { type Board, MAX_SLOTS, parseBoard, type Served, WORK_BOARD_KEY } from './work-board';

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

  /**
   * Writes a round's `served` and `due` per target (one update for up to TARGETS_PER_WRITE targets),
   * and answers the board after it (the next round reads no more).
   */
  async writeServed(served: readonly Served[]): Promise<Board> {
    if (served.length === 0) return this.read();
    let board = parseBoard(undefined);
    for (let i = 0; i < served.length; i += TARGETS_PER_WRITE) {
      const names: Record<string, string> = {};
      const values: Record<string, number> = {};
      const sets: string[] = [];
      const removes: string[] = [];
      served.slice(i, i + TARGETS_PER_WRITE).forEach((entry, j) => {
        names[`#s${j}`] = `served:${entry.target}`;
        names[`#d${j}`] = `due:${entry.target}`;
        values[`:s${j}`] = entry.served;
        sets.push(`#s${j} = :s${j}`);
        if (entry.due === undefined) removes.push(`#d${j}`);
        else {
          values[`:d${j}`] = entry.due;
          sets.push(`#d${j} = :d${j}`);
        }
      });
      const { Attributes } = await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: WORK_BOARD_KEY },
          UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
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
    // A board no router has written yet has no version (read as 0): that is unchanged too.
    const unchanged = version === 0 ? '(attribute_not_exists(version) OR version = :version)' : 'version = :version';
    const versionClause = rule === 'version-or-others' ? [unchanged] : [];
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
