import type { Env } from '../config/env';
import { ConfigError } from '../errors';
import type { Credentials, SecretCredentials } from './secret-credentials';

/** A connection URL variable and the variable naming the secret that holds its credentials. */
export interface SecretConnection {
  readonly url: string;
  readonly secret: string;
}

/** The AMQP URL and the management API share the broker user's secret. */
export const rabbitmqConnections: readonly SecretConnection[] = [
  { url: 'AMQP_URL', secret: 'RABBITMQ_SECRET_ARN' },
  { url: 'RABBITMQ_MANAGEMENT_URL', secret: 'RABBITMQ_SECRET_ARN' },
];

export const databaseConnections: readonly SecretConnection[] = [
  { url: 'NXRG_DATABASE_URL', secret: 'NXRG_DATABASE_SECRET_ARN' },
  { url: 'OPENXDS_DATABASE_URL', secret: 'OPENXDS_DATABASE_SECRET_ARN' },
];

/** Whether any of `connections` takes its credentials from a secret in `env`. */
export const usesSecrets = (env: Env, connections: readonly SecretConnection[]) =>
  connections.some((c) => Boolean(env[c.secret]));

/**
 * Refuses, at cold start, credentials where they do not belong: in a URL that also names a secret,
 * or in any URL of a function running on Lambda (its environment is readable by anyone who may read
 * the function's configuration). Locally and in tests a URL with credentials is fine.
 */
export function checkConnections(env: Env, connections: readonly SecretConnection[]): void {
  const onLambda = Boolean(env.AWS_LAMBDA_FUNCTION_NAME);
  const problems = connections.flatMap(({ url, secret }) => {
    if (!looksLikeCredentials(env[url])) return [];
    if (env[secret]) return [`${url}: must not carry credentials when ${secret} names the secret that holds them`];
    if (onLambda) return [`${url}: carries credentials; keep them in Secrets Manager and name the secret in ${secret}`];
    return [];
  });
  if (problems.length > 0) throw new ConfigError(problems);
}

/**
 * Whether `value` looks like a URL holding credentials, whatever its shape: an `@` anywhere (user
 * information, or a mistyped URL's), or a password in its query (`?password=`, which pg reads).
 */
export function looksLikeCredentials(value: string | undefined): boolean {
  return value !== undefined && (value.includes('@') || /[?&;](password|passwd|pwd)=/i.test(value));
}

/**
 * `env` with each secret's credentials put into the URLs that name it. Each secret is read once;
 * `refresh` reads them again instead of using the cached copy.
 */
export async function resolveConnections(
  env: Env,
  connections: readonly SecretConnection[],
  secrets: SecretCredentials,
  refresh = false,
): Promise<Env> {
  const ids = [...new Set(connections.map((c) => env[c.secret]).filter((id): id is string => Boolean(id)))];
  const read = await Promise.all(ids.map((id) => (refresh ? secrets.refresh(id) : secrets.get(id))));
  const byId = new Map(ids.map((id, i) => [id, read[i]!]));
  const resolved: Record<string, string | undefined> = { ...env };
  for (const { url, secret } of connections) {
    const id = env[secret];
    const value = env[url];
    if (id && value) resolved[url] = withCredentials(value, byId.get(id)!);
  }
  return resolved;
}

/** `url` with the user name and password set (percent-encoded, as pg and amqplib decode them). */
export function withCredentials(url: string, { username, password }: Credentials): string {
  const parsed = new URL(url);
  parsed.username = encodeURIComponent(username);
  parsed.password = encodeURIComponent(password);
  return parsed.toString();
}
