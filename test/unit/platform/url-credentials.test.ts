import fc from 'fast-check';
import { loadCleanupConfig } from '../../../lib/cleanup/config';
import type { Env } from '../../../lib/platform/config';
import { redactUrl } from '../../../lib/platform/config';
import { ConfigError, errorText } from '../../../lib/platform/errors';
import { checkConnections, databaseConnections, rabbitmqConnections } from '../../../lib/platform/secrets';
import { loadRouterConfig } from '../../../lib/routing/config';

/**
 * Issue 23, items 5 and 7: whatever shape a connection URL has (a missing slash, no scheme, a raw
 * reserved character in the password), no error text, and nothing the Lambda runtime would log of
 * the error, holds any part of the user name or password.
 */
const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:fairway/prod/rabbitmq-AbCdEf';

/** What a cold start failure shows: errorText for the logger, and the runtime's JSON of the error. */
function shown(error: unknown): string {
  const runtimeLine =
    error instanceof Error
      ? JSON.stringify({ errorType: error.name, errorMessage: error.message, ...error })
      : String(error);
  return `${errorText(error)}\n${runtimeLine}`;
}

/**
 * Every text a cold start with `env` shows: its error, if any, and the URL as connection errors
 * print it. A URL that lost the "@" before its host is a readable URL whose host and port are what
 * was typed after the user name (`amqp://u:5671/rest`): nothing can tell, so its redaction is not checked.
 */
function coldStartTexts(env: Env, url: string, redacted: boolean): string[] {
  const texts = redacted ? [redactUrl(url)] : [];
  const attempts = [
    () => loadRouterConfig(env),
    () => loadCleanupConfig(env),
    () => checkConnections({ ...env, AWS_LAMBDA_FUNCTION_NAME: 'fairway-prod-router' }, rabbitmqConnections),
    () => checkConnections({ ...env, AWS_LAMBDA_FUNCTION_NAME: 'fairway-prod-x' }, databaseConnections),
    () => checkConnections({ ...env, RABBITMQ_SECRET_ARN: ARN }, rabbitmqConnections),
  ];
  for (const attempt of attempts) {
    try {
      attempt();
    } catch (error) {
      texts.push(shown(error));
    }
  }
  return texts;
}

/** Windows of `secret` long enough not to be a coincidence, as written and percent-encoded. */
function parts(secret: string): string[] {
  const forms = [secret, encodeURIComponent(secret)];
  const size = 5;
  return forms.flatMap((form) =>
    form.length <= size ? [form] : Array.from({ length: form.length - size + 1 }, (_, i) => form.slice(i, i + size)),
  );
}

const leaked = (texts: string[], secret: string) =>
  parts(secret).filter((part) => texts.some((text) => text.includes(part)));

/**
 * Characters no fixed message uses in a run of five: upper-case letters unlike any variable's,
 * digits, reserved signs; the user's and the password's are apart, so that one is never taken for the other.
 */
const text = (alphabet: string, minLength: number) =>
  fc.string({ unit: fc.constantFrom(...alphabet.split('')), minLength, maxLength: 16 });
// At least five, the window `leaked` looks for: a shorter user such as `//.` is found in the fixed
// text `http:// or https://.` of a message, which is no leak.
const userText = text('QXZJKV.-_/#?%', 5);
const passwordText = text('WY0123456789%/#?@:!$&*+=~^', 6);

/** Shapes a connection URL takes, right or mistyped (`s` scheme, `u` user, `p` password, `h` host). */
const shapes: Record<string, (s: string, u: string, p: string, h: string) => string> = {
  wellFormed: (s, u, p, h) => `${s}://${u}:${p}@${h}:5671/vhost`,
  encoded: (s, u, p, h) => `${s}://${encodeURIComponent(u)}:${encodeURIComponent(p)}@${h}:5671/`,
  oneSlash: (s, u, p, h) => `${s}:/${u}:${p}@${h}:5671`,
  noSlash: (s, u, p, h) => `${s}:${u}:${p}@${h}`,
  threeSlashes: (s, u, p, h) => `${s}:///${u}:${p}@${h}`,
  noColon: (s, u, p, h) => `${s}//${u}:${p}@${h}`,
  schemeless: (_s, u, p, h) => `${u}:${p}@${h}`,
  noAt: (s, u, p, h) => `${s}://${u}:${p}${h}`,
  doubleAt: (s, u, p, h) => `${s}://${u}:${p}@@${h}`,
  passwordOnly: (s, _u, p, h) => `${s}://:${p}@${h}`,
  inPath: (s, u, p, h) => `${s}://${h}/${u}:${p}@x`,
  inQuery: (s, u, p, h) => `${s}://${u}@${h}/db?password=${encodeURIComponent(p)}`,
  spaced: (s, u, p, h) => ` ${s}://${u}:${p}@${h} `,
};

const schemes = fc.constantFrom('amqp', 'amqps', 'AMQPS', 'http', 'https', 'postgres', 'postgresql', 'amqps ');

describe('no text of a cold start shows any part of a credential, whatever the URL', () => {
  it.each(Object.keys(shapes))('%s', (shape) => {
    fc.assert(
      fc.property(schemes, userText, passwordText, (scheme, user, password) => {
        const url = shapes[shape]!(scheme, user, password, 'b-1234.mq.example');
        const env = {
          AMQP_URL: url,
          RABBITMQ_MANAGEMENT_URL: url,
          TENANT_TABLE: 't',
          CLEANUP_TABLE: 't',
          NXRG_DATABASE_URL: url,
          OPENXDS_DATABASE_URL: url,
        };
        const texts = coldStartTexts(env, url, shape !== 'noAt');
        expect(leaked(texts, password)).toEqual([]);
        // Without an "@" nothing tells a user name from a host: the URL reads as the host `u`.
        if (shape !== 'noAt') expect(leaked(texts, user)).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });
});

describe('the cases issue 23 reported', () => {
  const problemsOf = (env: Env): string => {
    try {
      loadRouterConfig(env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as ConfigError).problems.join('; ');
    }
    throw new Error('expected a ConfigError');
  };
  const router = (AMQP_URL: string) => ({ AMQP_URL, RABBITMQ_MANAGEMENT_URL: 'http://h:15672', TENANT_TABLE: 't' });

  it('amqps:/user:PW@host:5671 (one slash) is refused for its missing slash, not quoted as a vhost', () => {
    const problems = problemsOf(router('amqps:/user:Secret-PW@host:5671'));
    expect(problems).toContain('AMQP_URL: must have "//" after the scheme');
    expect(problems).not.toMatch(/Secret|PW|ecret/);
  });

  it('u:PW@h (no scheme) leaks no character of the password', () => {
    const problems = problemsOf(router('u:Secret-PW@h'));
    expect(problems).toContain('AMQP_URL: must be a URL starting with amqp:// or amqps://');
    expect(problems).not.toMatch(/ecret|PW/);
  });

  it('redactUrl prints the scheme and host of a readable URL, and nothing of an unreadable one', () => {
    expect(redactUrl('amqps://fairway:Secret-PW@b-1.mq.example:5671/prod')).toBe('amqps://b-1.mq.example:5671');
    expect(redactUrl('amqps:/user:Secret-PW@host:5671')).not.toContain('Secret');
    expect(redactUrl('amqps://user:12/Secret-PW@host')).not.toContain('Secret');
  });
});
