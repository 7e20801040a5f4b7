import { redactUrl } from '../../../lib/platform/config';

export type ManagementAnswer = { status: number; body: unknown } | { status: 'unreachable'; reason: string };

/** GETs `path` of the management API at `baseUrl` with its credentials; the status and body as they came. */
export async function managementGet(baseUrl: string, path: string): Promise<ManagementAnswer> {
  const url = new URL(baseUrl);
  const authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
  try {
    const response = await fetch(`${url.origin}${path}`, {
      headers: { authorization },
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON (an error page): kept as text.
    }
    return { status: response.status, body };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
    return { status: 'unreachable', reason: `${redactUrl(baseUrl)} does not answer (${cause})` };
  }
}
