/** What an AMQP URL says about the session it opens (amqplib's reading of it). */

/** The user the connection authenticates as: the URL's user name, or amqplib's default `guest`. */
export function amqpUser(url: string): string {
  return decodeURIComponent(new URL(url).username) || 'guest';
}

/** The vhost the connection opens: the URL's path without its leading `/`, decoded; `/` when there is none. */
export function amqpVhost(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1)) || '/';
}
