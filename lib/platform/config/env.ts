import { z } from 'zod';
import { ConfigError } from '../errors';
import { urlProblem } from './url';

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
  /** A URL with one of `schemes` (e.g. `['postgres', 'postgresql']`) and a host (lib/platform/config/url.ts); the value is never quoted. */
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
