import type { Env } from '../../../lib/platform/config';
import { errorText } from '../../../lib/platform/errors';
import { CLI_AWS_BOUNDS } from '../../../lib/platform/network-bounds';
import {
  type Credentials,
  databaseConnections,
  rabbitmqConnections,
  SecretCredentials,
  secretsManagerClient,
  withCredentials,
} from '../../../lib/platform/secrets';
import { type Check, fail, ok } from './check';

/**
 * Reads each configured secret as the functions do (lib/platform/secrets: readable, JSON with a username
 * and a password) and returns the environment with the credentials put into the URLs that name
 * them, for the live checks. A secret that fails leaves its URLs without credentials.
 */
export async function resolveSecrets(env: Env): Promise<{ checks: Check[]; env: Env }> {
  const connections = [...rabbitmqConnections, ...databaseConnections];
  const ids = [...new Set(connections.map((c) => c.secret))].filter((name) => env[name]);
  if (ids.length === 0) return { checks: [], env };
  const client = secretsManagerClient(CLI_AWS_BOUNDS, {
    region: env.AWS_REGION ?? 'us-east-1',
    ...(env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
      ? {
          credentials: {
            accessKeyId: env.AWS_ACCESS_KEY_ID,
            secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
            ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
          },
        }
      : {}),
  });
  const secrets = new SecretCredentials(client);
  const checks: Check[] = [];
  const read = new Map<string, Credentials>();
  try {
    for (const name of ids) {
      try {
        read.set(name, await secrets.get(env[name]!));
        checks.push(ok(`secret: ${name}`, 'readable, with a username and a password'));
      } catch (error) {
        checks.push(fail(`secret: ${name}`, errorText(error).replace(/^\w+: /, '')));
      }
    }
  } finally {
    client.destroy();
  }
  const resolved: Record<string, string | undefined> = { ...env };
  for (const { url, secret } of connections) {
    const credentials = read.get(secret);
    if (credentials && env[url]) resolved[url] = withCredentials(env[url], credentials);
  }
  return { checks, env: resolved };
}
