const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { ratePeriodSeconds } = require('./schedule');

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
 * A cleanup function's timeout within its lease (a step still running when its claim expires lets a
 * second step run the same operation), and its time budget below its schedule's interval (else
 * every schedule finds the last step still running and is throttled).
 */
function cleanupTimingProblems(functions) {
  const problems = [];
  for (const [name, fn] of Object.entries(functions)) {
    const env = fn.environment ?? {};
    if (env.CLEANUP_LEASE_SECONDS === undefined) continue;
    const timeout = Number(fn.timeout);
    const lease = Number(env.CLEANUP_LEASE_SECONDS);
    const budget = Number(env.CLEANUP_TIME_BUDGET_SECONDS);
    if (Number(env.CLEANUP_FUNCTION_TIMEOUT_SECONDS) !== timeout)
      problems.push(`${name}: CLEANUP_FUNCTION_TIMEOUT_SECONDS must be the function's timeout (${timeout} s)`);
    if (timeout > lease)
      problems.push(
        `${name}: its timeout (${timeout} s, cleanupTimeoutSeconds) is longer than its lease (${lease} s, cleanupLeaseSeconds): a step could outlive its claim and a second run the same operation`,
      );
    const rates = (fn.events ?? []).flatMap((event) =>
      event.schedule ? [event.schedule.rate ?? event.schedule].flat() : [],
    );
    for (const rate of rates) {
      const interval = ratePeriodSeconds(rate);
      if (typeof interval === 'number' && !(budget < interval))
        problems.push(
          `${name}: its time budget (${budget} s, cleanupTimeBudgetSeconds) is not below its schedule's interval (${interval} s): every schedule would find the last step still running`,
        );
    }
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
