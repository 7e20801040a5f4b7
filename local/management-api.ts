import { MANAGEMENT_API_TIMEOUT_MS } from '../lib/platform/network-bounds';

/**
 * Calls the RabbitMQ management API with the credentials of `baseUrl` (the local stack's and the
 * tests' vhost set-up); throws on a non-2xx answer, naming the path but not the credentials.
 */
export function managementApi(baseUrl: string) {
  const base = new URL(baseUrl);
  const authorization = `Basic ${Buffer.from(`${decodeURIComponent(base.username)}:${decodeURIComponent(base.password)}`).toString('base64')}`;
  const origin = `${base.protocol}//${base.host}`;
  return async <T = unknown>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${origin}${path}`, {
      method,
      headers: { authorization, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(MANAGEMENT_API_TIMEOUT_MS),
    });
    const text = await response.text();
    if (!response.ok)
      throw new Error(`${method} ${path.split('?')[0]} answered ${response.status}: ${text.slice(0, 200)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  };
}
