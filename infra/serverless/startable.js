const { readFileSync } = require('node:fs');
const { join } = require('node:path');

/**
 * Refusals for a stage whose functions could not start or would break a guarantee once running:
 * what the cold-start checks (lib/platform/config) would refuse on every invocation, caught at packaging.
 */

/** Variables every function that has them needs set: a URL to connect to, the time-based job's types and retention. */
const isRequired = (variable) =>
  variable.endsWith('_URL') || variable === 'NXRG_DOCUMENT_TYPES' || variable === 'CLEANUP_TIMEBASED_DOCUMENT_TYPES';

/**
 * The param serverless.yml sets each variable from (`VARIABLE: ${param:name}`): the operator types
 * the param, so a refusal names it. Read from the file, since serverless has resolved the values.
 */
function paramOfVariable() {
  const text = readFileSync(join(__dirname, '../../serverless.yml'), 'utf8');
  return new Map([...text.matchAll(/^\s*([A-Z][A-Z0-9_]*): \$\{param:(\w+)\}/gm)].map((m) => [m[1], m[2]]));
}

function emptyRequiredProblems(functions) {
  const params = paramOfVariable();
  return Object.entries(functions).flatMap(([name, fn]) =>
    Object.entries(fn.environment ?? {})
      .filter(([variable, value]) => isRequired(variable) && (value === '' || value === undefined || value === null))
      .map(([variable]) => {
        const param = params.get(variable);
        const fix = param ? `set the param ${param} (--param="${param}=…")` : 'set its param';
        return `${name}: ${variable} is empty; ${fix} (docs/configuration.md)`;
      }),
  );
}

/** Subnets and security groups come as a pair: Lambda needs both to place a function in a VPC. */
function networkProblems({ subnetIds, securityGroupIds }) {
  const subnets = String(subnetIds ?? '').trim();
  const groups = String(securityGroupIds ?? '').trim();
  if (subnets !== '' && groups === '')
    return [
      'vpcSubnetIds is set but vpcSecurityGroupIds is empty: a function in a VPC needs at least one security group',
    ];
  if (subnets === '' && groups !== '')
    return [
      'vpcSecurityGroupIds is set but vpcSubnetIds is empty: the functions would run outside the VPC the groups belong to',
    ];
  return [];
}

/**
 * A cleanup function checks its lease, time budget and database timeout against the timeout it is
 * told (CLEANUP_FUNCTION_TIMEOUT_SECONDS, lib/cleanup/config.ts): it must be the function's own. The
 * lease (timeout + 3 min) and the budget (at most 45 s, below any schedule's minute) follow from it.
 */
function cleanupTimingProblems(functions) {
  const problems = [];
  for (const [name, fn] of Object.entries(functions)) {
    const env = fn.environment ?? {};
    if (env.CLEANUP_FUNCTION_TIMEOUT_SECONDS === undefined) continue;
    const timeout = Number(fn.timeout);
    if (Number(env.CLEANUP_FUNCTION_TIMEOUT_SECONDS) !== timeout)
      problems.push(`${name}: CLEANUP_FUNCTION_TIMEOUT_SECONDS must be the function's timeout (${timeout} s)`);
  }
  return problems;
}

function startableProblems(service) {
  return [
    ...emptyRequiredProblems(service.functions),
    ...networkProblems(service.custom.vpc ?? {}),
    ...cleanupTimingProblems(service.functions),
  ];
}

module.exports = { startableProblems };
