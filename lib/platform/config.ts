import { z } from 'zod';
import { ConfigError } from './errors';

export type Env = Readonly<Record<string, string | undefined>>;

/**
 * Parses environment variables with a zod object whose keys are the variable names.
 * Errors name the variable and what was wrong, never its value (it may be a secret).
 */
export function parseEnv<S extends z.ZodObject>(schema: S, env: Env): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  throw new ConfigError(
    result.error.issues.map((issue) => `${String(issue.path[0] ?? '(environment)')}: ${issue.message}`),
  );
}

const blankAsMissing = (value: unknown) => (value === '' ? undefined : value);

/** Reusable field parsers; every one treats an empty string as "not set". */
export const setting = {
  text: () => z.preprocess(blankAsMissing, z.string({ error: 'is required' })),
  optionalText: () => z.preprocess(blankAsMissing, z.string().optional()),
  textOr: (fallback: string) => z.preprocess(blankAsMissing, z.string().default(fallback)),
  /** A URL with one of `schemes` (e.g. `['postgres', 'postgresql']`) and a host (`urlProblem`, below); the value is never quoted. */
  url: (schemes: readonly string[]) =>
    z.preprocess(blankAsMissing, z.string({ error: 'is required' }).superRefine(urlOf(schemes))),
  optionalUrl: (schemes: readonly string[]) =>
    z.preprocess(blankAsMissing, z.string().superRefine(urlOf(schemes)).optional()),
  int: (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
    z.preprocess(
      blankAsMissing,
      z.coerce
        .number({ error: 'must be an integer' })
        .int({ error: 'must be an integer' })
        .min(min, { error: `must be at least ${min}` })
        .max(max, { error: `must be at most ${max}` })
        .default(fallback),
    ),
  bool: (fallback: boolean) =>
    z.preprocess(
      blankAsMissing,
      z
        .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
        .transform((v) => v === 'true' || v === '1')
        .default(fallback),
    ),
  /** A JSON document validated by `schema`, e.g. per-target settings. */
  json: <T extends z.ZodType>(schema: T, fallback: z.input<T>) =>
    z.preprocess(
      blankAsMissing,
      z
        .string()
        .transform((raw, ctx) => {
          try {
            return JSON.parse(raw) as unknown;
          } catch {
            ctx.addIssue({ code: 'custom', message: 'must be valid JSON' });
            return z.NEVER;
          }
        })
        .pipe(schema)
        .prefault(JSON.stringify(fallback)),
    ),
};

/** Refuses a value that is not a URL of `schemes` with a host, saying why and what to fix, never quoting it. */
const urlOf = (schemes: readonly string[]) => (value: string, ctx: z.RefinementCtx) => {
  const problem = urlProblem(value, schemes);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
};

/**
 * Why a connection URL setting cannot be used, in words that never quote it: a mistyped URL puts
 * its password where a host or vhost would be, so no part of the value is ever shown.
 */

/** How to write the reserved characters a user name or password may hold. */
const ENCODE_HINT =
  'if the user name or password holds reserved characters, percent-encode them (% as %25, / as %2F, # as %23, ? as %3F, @ as %40, : as %3A)';

/** The first reason `value` is not a URL of one of `schemes` with a host, or undefined when it is one. */
export function urlProblem(value: string, schemes: readonly string[]): string | undefined {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(value)?.[1];
  if (scheme === undefined || !schemes.includes(scheme.toLowerCase()))
    return `must be a URL starting with ${schemes.map((s) => `${s}://`).join(' or ')}`;
  if (/[\s\p{Cc}]/u.test(value)) return 'must not contain spaces or control characters';
  if (!value.startsWith(`${scheme}://`)) return 'must have "//" after the scheme';
  if (/%(?![0-9A-Fa-f]{2})/.test(value)) return 'has a "%" not followed by two hex digits: write a literal % as %25';
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return `cannot be read as a URL: ${ENCODE_HINT}`;
  }
  if (parsed.hostname === '') return 'has no host (scheme://host:port/…)';
  const delimiters = parsed.username !== '' || parsed.password !== '' ? 1 : 0;
  if (value.split('@').length - 1 !== delimiters) return `has an "@" outside its user information: ${ENCODE_HINT}`;
  if (![parsed.username, parsed.password, parsed.pathname].every(decodes))
    return 'has a percent-escape that is not UTF-8: encode each character as its UTF-8 bytes (é as %C3%A9)';
  return undefined;
}

function decodes(part: string): boolean {
  try {
    decodeURIComponent(part);
    return true;
  } catch {
    return false;
  }
}

/** What an AMQP URL says about the session it opens (amqplib's reading of it). */

/** The user the connection authenticates as: the URL's user name, or amqplib's default `guest`. */
export function amqpUser(url: string): string {
  return decodeURIComponent(new URL(url).username) || 'guest';
}

/** The vhost the connection opens: the URL's path without its leading `/`, decoded; `/` when there is none. */
export function amqpVhost(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1)) || '/';
}

/**
 * The URL as logs and error messages may show it: its scheme and host only, with no user name,
 * password or path. A URL whose host cannot be told apart from its credentials (a missing slash, a
 * raw `/` or `@` in the password) shows nothing of itself.
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return UNREADABLE;
  }
  const delimiters = parsed.username !== '' || parsed.password !== '' ? 1 : 0;
  const authority = url.slice(parsed.protocol.length);
  // `user:@host` is more often `user:` + a password that starts with "@" and lost its own "@" than an empty password.
  const emptyPassword = parsed.password === '' && /^\/\/[^/?#@]*:@/.test(authority);
  if (
    !authority.startsWith('//') ||
    parsed.hostname === '' ||
    url.split('@').length - 1 !== delimiters ||
    emptyPassword
  )
    return UNREADABLE;
  return `${parsed.protocol}//${parsed.host}`;
}

const UNREADABLE = '(a URL that cannot be read; check its setting)';
