import { GetParameterError } from '@aws-lambda-powertools/parameters';
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { SecretsManagerClient, type SecretsManagerClientConfig } from '@aws-sdk/client-secrets-manager';
import { namingFailures } from './aws';
import type { Env } from './config';
import { ConfigError, FairwayError } from './errors';
import { type AwsBounds, awsClientOptions, SECRETS_MANAGER_BOUNDS } from './network-bounds';

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

/** A user name and password, as RDS and rotation functions store them (`{"username": …, "password": …}`). */
export interface Credentials {
  readonly username: string;
  readonly password: string;
}

/** A secret could not be read or is not credentials. The message names the secret, never its value. */
export class SecretError extends FairwayError {}

/** How long a secret is trusted before it is read again: a rotation is picked up within this time. */
export const SECRET_MAX_AGE_SECONDS = 300;

/**
 * The functions' Secrets Manager client (region from the Lambda environment), bounded
 * (SECRETS_MANAGER_BOUNDS): a Secrets Manager that never answers fails the read, naming it, instead
 * of holding the invocation to its timeout.
 */
export function secretsManagerClient(
  bounds: AwsBounds = SECRETS_MANAGER_BOUNDS,
  config: Omit<SecretsManagerClientConfig, 'maxAttempts' | 'requestHandler'> = {},
): SecretsManagerClient {
  return namingFailures(
    new SecretsManagerClient({ ...config, ...awsClientOptions(bounds) }),
    'Secrets Manager',
    bounds,
  );
}

/**
 * Credentials kept in AWS Secrets Manager, read with Powertools Parameters and cached per container
 * for `SECRET_MAX_AGE_SECONDS`; `refresh` reads them again at once (after an authentication failure).
 */
export class SecretCredentials {
  private readonly provider: SecretsProvider;

  constructor(client: SecretsManagerClient = secretsManagerClient()) {
    this.provider = new SecretsProvider({ awsSdkV3Client: client });
  }

  get(secretId: string): Promise<Credentials> {
    return this.read(secretId, false);
  }

  refresh(secretId: string): Promise<Credentials> {
    return this.read(secretId, true);
  }

  private async read(secretId: string, forceFetch: boolean): Promise<Credentials> {
    let raw: unknown;
    try {
      // Parsed here, not by Powertools: its JSON error would quote the secret's text.
      raw = await this.provider.get(secretId, { maxAge: SECRET_MAX_AGE_SECONDS, forceFetch });
    } catch (error) {
      throw readFailure(secretId, error instanceof GetParameterError && error.cause ? error.cause : error);
    }
    return credentialsIn(secretId, raw);
  }
}

function readFailure(secretId: string, error: unknown): SecretError {
  const name = (error as { name?: string }).name;
  const reason =
    name === 'ResourceNotFoundException'
      ? 'does not exist (or is scheduled for deletion): create it, or fix the ARN the stage passes'
      : name === 'AccessDeniedException'
        ? "may not be read: the function's role needs secretsmanager:GetSecretValue on it (and kms:Decrypt on its key if it has one of its own)"
        : name === 'DecryptionFailure'
          ? "cannot be decrypted: the function's role needs kms:Decrypt on the secret's key"
          : `could not be read (${name ?? 'unknown error'}): check that Secrets Manager is reachable from the function`;
  return new SecretError(`Secret ${secretId} ${reason}.`, { cause: error });
}

function credentialsIn(secretId: string, raw: unknown): Credentials {
  const malformed = () =>
    new SecretError(`Secret ${secretId} must be a JSON object with string fields "username" and "password".`);
  if (typeof raw !== 'string') throw malformed();
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw malformed();
  }
  const { username, password } = (parsed ?? {}) as Record<string, unknown>;
  if (typeof username !== 'string' || typeof password !== 'string' || username === '' || password === '')
    throw malformed();
  return { username, password };
}
