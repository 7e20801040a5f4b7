import { ManagementApiError } from '../platform/errors';

/**
 * A management API path from its segments, each percent-encoded, so that no vhost or queue name
 * (`/`, `%2F`, `#`, `?`, spaces, unicode) can change the path. `.` and `..` are refused: the URL
 * parser resolves them even when encoded (`/api/queues/<vhost>/..` is `/api/queues/`), so they
 * cannot name a queue or vhost through this API at all.
 */
export function managementPath(...segments: string[]): string {
  for (const segment of segments) {
    if (isDotSegment(segment)) {
      throw new ManagementApiError(
        `The management API cannot address the name ${JSON.stringify(segment)}: "." and ".." are path segments, not names`,
      );
    }
  }
  return `/${segments.map(encodeURIComponent).join('/')}`;
}

/** `.` and `..`: URL parsers resolve them away, so they cannot be a segment of a path that names something. */
export function isDotSegment(name: string): boolean {
  return name === '.' || name === '..';
}
