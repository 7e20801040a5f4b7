/** What an AMQP URL says about the session it opens (amqplib's reading of it). */

/** The user the connection authenticates as: the URL's user name, or amqplib's default `guest`. */
export function amqpUser(url: string): string {
  return decodeURIComponent(new URL(url).username) || 'guest';
}
