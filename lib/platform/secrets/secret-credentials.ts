import { GetParameterError } from '@aws-lambda-powertools/parameters';
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { SecretsManagerClient, type SecretsManagerClientConfig } from '@aws-sdk/client-secrets-manager';
import { namingFailures } from '../aws/bounded-client';
import { FairwayError } from '../errors';
import { type AwsBounds, awsClientOptions, SECRETS_MANAGER_BOUNDS } from '../network-bounds';

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
