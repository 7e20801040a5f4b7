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
