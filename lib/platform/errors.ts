/**
 * Fairway's errors. Code branches on these types, never on message text; each keeps the error it
 * wraps as `cause`. Messages say what was wrong and what to do, and never carry a secret or a
 * document's content.
 */
export class FairwayError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A setting that is missing or malformed. The message names every offending setting, never its value. */
export class ConfigError extends FairwayError {
  constructor(
    readonly problems: readonly string[],
    readonly remedy = 'Fix these environment variables and redeploy.',
  ) {
    super(`Invalid configuration: ${problems.join('; ')}. ${remedy}`);
  }
}

export interface Problem {
  /** The event field, as a dotted path (e.g. `message.body`). */
  field: string;
  /** What is wrong with it, never its value (the event may carry personal data). */
  reason: string;
}

/** An after-process event that cannot be routed as it is; the message names each bad field. */
export class InvalidEventError extends FairwayError {
  readonly problems: readonly Problem[];

  constructor(field: string, reason: string);
  constructor(problems: readonly Problem[]);
  constructor(fieldOrProblems: string | readonly Problem[], reason?: string) {
    const problems =
      typeof fieldOrProblems === 'string'
        ? [{ field: fieldOrProblems, reason: reason ?? 'is invalid' }]
        : fieldOrProblems;
    super(problems.map((p) => `${p.field}: ${p.reason}`).join('; '));
    this.problems = problems;
  }

  get fields(): string[] {
    return this.problems.map((p) => p.field);
  }
}

/** RabbitMQ could not be reached, refused an operation, or closed the channel or connection. */
export class BrokerError extends FairwayError {
  constructor(message: string, options?: { cause?: unknown; replyCode?: number }) {
    super(message, options);
    this.replyCode = options?.replyCode;
  }
  /** The AMQP reply code when the broker gave one (e.g. 404 not found, 406 precondition failed). */
  readonly replyCode: number | undefined;
}

/**
 * RabbitMQ left an operation unanswered within its bound (lib/platform/network-bounds.ts): the channel or
 * connection it was sent on is in doubt, and is not used again.
 */
export class BrokerTimeoutError extends BrokerError {}

/** An AWS service did not answer within its bounds (lib/platform/network-bounds.ts), or could not be reached. */
export class AwsServiceError extends FairwayError {
  constructor(
    readonly service: string,
    message: string,
    options: { cause: unknown },
  ) {
    super(`${service} ${message}`, options);
  }
}

/** Every record of a batch failed on the infrastructure: the invocation fails so that it is seen and backed off. */
export class BatchFailedError extends FairwayError {}

/** The RabbitMQ management API could not be reached or answered with an error status. */
export class ManagementApiError extends FairwayError {
  constructor(message: string, options?: { cause?: unknown; status?: number }) {
    super(message, options);
    this.status = options?.status;
  }
  /** The HTTP status, when the API answered at all. */
  readonly status: number | undefined;
}

/** Which database a cleanup job talks to, and the setting that points at it. */
export const databases = {
  NXRG: 'NXRG_DATABASE_URL',
  OpenXDS: 'OPENXDS_DATABASE_URL',
} as const;
export type DatabaseName = keyof typeof databases;

/**
 * A PostgreSQL call failed. The message names the database and the setting that points at it
 * (never the connection string, which holds the password), then the driver's own message.
 */
export class DatabaseError extends FairwayError {
  constructor(
    readonly database: DatabaseName,
    cause: unknown,
  ) {
    super(`${database} database (${databases[database]}): ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
  }

  /** Runs `call`, turning whatever it throws into a DatabaseError of `database`. */
  static async wrap<T>(database: DatabaseName, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw error instanceof DatabaseError ? error : new DatabaseError(database, error);
    }
  }
}

/** One line for a log or an error report: the error's type and message, with its causes. */
export function errorText(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && depth < 5; depth++) {
    if (current instanceof Error) {
      parts.push(`${current.name}: ${current.message}`);
      current = current.cause;
    } else {
      parts.push(String(current));
      current = undefined;
    }
  }
  return parts.join(' (caused by ') + ')'.repeat(Math.max(0, parts.length - 1));
}
