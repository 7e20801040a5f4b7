/**
 * A local Serverless plugin that refuses to package a stage that would deploy badly, before
 * anything is written:
 * - a function's environment holding a URL with a password (credentials belong in Secrets
 *   Manager: docs/deploying.md "Secrets"); the error names the variable, never the value;
 * - a secret named other than by its ARN (the role's grant needs the ARN);
 * - functions that hold an AMQP connection per container (those with AMQP_URL) whose reserved
 *   concurrencies add up to more than `custom.rabbitmqConnectionBudget`, or that have none;
 * - an SQS event source allowed more concurrent invocations than its function's reserved
 *   concurrency (the surplus would be throttled, and retried into the dead-letter queue).
 */
class FairwayGuard {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = { 'before:package:initialize': () => this.check() };
  }

  check() {
    const service = this.serverless.service;
    const problems = [
      ...credentialProblems(service),
      ...connectionProblems(service.functions, Number(service.custom.rabbitmqConnectionBudget)),
    ];
    if (problems.length > 0) {
      const ServerlessError = this.serverless.classes.Error;
      throw new ServerlessError(`Fairway refuses to package this stage:\n- ${problems.join('\n- ')}`);
    }
  }
}

function credentialProblems(service) {
  const environments = [
    ['provider', service.provider.environment ?? {}],
    ...Object.entries(service.functions).map(([name, fn]) => [name, fn.environment ?? {}]),
  ];
  return environments.flatMap(([owner, environment]) =>
    Object.entries(environment).flatMap(([variable, value]) => {
      if (hasPassword(value))
        return [
          `${owner}: ${variable} carries a password; pass the URL without credentials and the secret's ARN (docs/deploying.md "Secrets")`,
        ];
      if (variable.endsWith('_SECRET_ARN') && value !== '' && !/^arn:aws[\w-]*:secretsmanager:/.test(String(value)))
        return [`${owner}: ${variable} must be a Secrets Manager secret ARN (arn:aws:secretsmanager:…)`];
      return [];
    }),
  );
}

function hasPassword(value) {
  if (typeof value !== 'string') return false;
  try {
    return new URL(value).password !== '';
  } catch {
    return false;
  }
}

function connectionProblems(functions, budget) {
  const problems = [];
  let connections = 0;
  for (const [name, fn] of Object.entries(functions)) {
    const reserved = Number(fn.reservedConcurrency);
    if (fn.environment?.AMQP_URL !== undefined) {
      if (!Number.isInteger(reserved) || reserved < 1)
        problems.push(`${name}: holds a broker connection per container, so it needs a reserved concurrency`);
      else connections += reserved;
    }
    for (const event of fn.events ?? []) {
      const maximum = Number(event.sqs?.maximumConcurrency);
      if (maximum > reserved)
        problems.push(
          `${name}: its SQS event source may run ${maximum} at once, above its reserved concurrency ${reserved}`,
        );
    }
  }
  if (!(connections <= budget))
    problems.push(
      `the functions holding broker connections may open ${connections}, above rabbitmqConnectionBudget ${budget}`,
    );
  return problems;
}

module.exports = FairwayGuard;
