/**
 * Why a connection URL setting cannot be used, in words that never quote it: a mistyped URL puts
 * its password where a host or vhost would be, so no part of the value is ever shown.
 */

/** How to write the reserved characters a user name or password may hold. */
const ENCODE_HINT =
  'if the user name or password holds reserved characters, percent-encode them (% as %25, / as %2F, # as %23, ? as %3F, @ as %40, : as %3A)';

/** The first reason `value` is not a URL of one of `schemes` with a host, or undefined when it is one. */
export function urlProblem(value: string, schemes: readonly string[]): string | undefined {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(value)?.[1];
  if (scheme === undefined || !schemes.includes(scheme.toLowerCase()))
    return `must be a URL starting with ${schemes.map((s) => `${s}://`).join(' or ')}`;
  if (/[\s\p{Cc}]/u.test(value)) return 'must not contain spaces or control characters';
  if (!value.startsWith(`${scheme}://`)) return 'must have "//" after the scheme';
  if (/%(?![0-9A-Fa-f]{2})/.test(value)) return 'has a "%" not followed by two hex digits: write a literal % as %25';
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return `cannot be read as a URL: ${ENCODE_HINT}`;
  }
  if (parsed.hostname === '') return 'has no host (scheme://host:port/…)';
  const delimiters = parsed.username !== '' || parsed.password !== '' ? 1 : 0;
  if (value.split('@').length - 1 !== delimiters) return `has an "@" outside its user information: ${ENCODE_HINT}`;
  if (![parsed.username, parsed.password, parsed.pathname].every(decodes))
    return 'has a percent-escape that is not UTF-8: encode each character as its UTF-8 bytes (é as %C3%A9)';
  return undefined;
}

function decodes(part: string): boolean {
  try {
    decodeURIComponent(part);
    return true;
  } catch {
    return false;
  }
}
