/**
 * Refusals for credentials where a template would carry them (docs/deploying.md "Secrets"). Every
 * message names the param or variable, never its value: a mistyped URL puts its password anywhere.
 */

/** A value that is, or was meant to be, a URL: a scheme, `//`, or a name that says so. */
const isUrlLike = (name, value) =>
  /(_URL|_ENDPOINT|Url|Endpoint)$/.test(name) || /^\s*[A-Za-z][A-Za-z0-9+.-]*:|\/\//.test(value);

/**
 * Whether `value` looks like it holds credentials, whatever its shape: any `@` (user information,
 * or where a mistyped URL left it) or a password in its query (`?password=`, which pg reads).
 * lib/platform/secrets.ts applies the same rule at cold start.
 */
const looksLikeCredentials = (value) => value.includes('@') || /[?&;](password|passwd|pwd)=/i.test(value);

const remedy = 'pass the URL without credentials and the secret\'s ARN (docs/deploying.md "Secrets")';

/** Params (the stage's and `--param`s) that look like URLs with credentials. */
function paramProblems(params) {
  return Object.entries(params)
    .filter(([name, value]) => typeof value === 'string' && isUrlLike(name, value) && looksLikeCredentials(value))
    .map(([name]) => `param ${name} looks like a URL with credentials (an "@" or a password= in it); ${remedy}`);
}

/** Function environments holding a credential-looking URL, or a secret named other than by its ARN. */
function environmentProblems(service) {
  const environments = [
    ['provider', service.provider.environment ?? {}],
    ...Object.entries(service.functions).map(([name, fn]) => [name, fn.environment ?? {}]),
  ];
  return environments.flatMap(([owner, environment]) =>
    Object.entries(environment).flatMap(([variable, value]) => {
      if (typeof value !== 'string') return [];
      if (isUrlLike(variable, value) && looksLikeCredentials(value))
        return [`${owner}: ${variable} looks like a URL with credentials (an "@" or a password= in it); ${remedy}`];
      if (variable.endsWith('_SECRET_ARN') && value !== '' && !/^arn:aws[\w-]*:secretsmanager:/.test(value))
        return [`${owner}: ${variable} must be a Secrets Manager secret ARN (arn:aws:secretsmanager:…)`];
      return [];
    }),
  );
}

module.exports = { paramProblems, environmentProblems };
