const { environmentProblems, paramProblems } = require('./credentials');
const { startableProblems } = require('./startable');

/**
 * A local Serverless plugin that refuses to package a stage that would deploy badly, before
 * anything is written (docs/deploying.md lists the refusals):
 * - credentials where the template would carry them: any param or function variable that looks
 *   like a URL with credentials, whatever its shape (credentials.js); a secret named other than by
 *   its ARN (the role's grant needs the ARN);
 * - a stage whose functions could not start: an empty required setting, subnets without security
 *   groups, a cleanup function told another timeout than its own (startable.js);
 * - functions that hold an AMQP connection per container (those with AMQP_URL) whose reserved
 *   concurrencies add up to more than `custom.rabbitmqConnectionBudget`, or that have none;
 * - an SQS event source allowed more concurrent invocations than its function's reserved
 *   concurrency (the surplus would be throttled, and retried into the dead-letter queue);
 * - a distributor whose reserved concurrency is below DISTRIBUTOR_MAX_EXECUTIONS + 1 (its
 *   executions and the schedule's invocation, docs/distributor.md "Run model").
 * Every message names the param or variable, never its value.
 */
class FairwayGuard {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = { 'before:package:initialize': () => this.check() };
  }

  check() {
    const service = this.serverless.service;
    const problems = [
      ...paramProblems(this.params()),
      ...environmentProblems(service),
      ...startableProblems(service),
      ...connectionProblems(service.functions, Number(service.custom.rabbitmqConnectionBudget)),
    ];
    if (problems.length > 0) {
      const ServerlessError = this.serverless.classes.Error;
      throw new ServerlessError(`Fairway refuses to package this stage:\n- ${problems.join('\n- ')}`);
    }
  }

  /** The stage's params as serverless resolves them: `--param`s over the stage block over `default`. */
  params() {
    const declared = this.serverless.configurationInput?.params ?? {};
    const given = Object.fromEntries(
      (this.serverless.processedInput?.options?.param ?? []).map((item) => {
        const at = String(item).indexOf('=');
        return [String(item).slice(0, at), String(item).slice(at + 1)];
      }),
    );
    return { ...declared.default, ...declared[this.serverless.service.provider.stage], ...given };
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
    const executions = Number(fn.environment?.DISTRIBUTOR_MAX_EXECUTIONS);
    if (Number.isInteger(executions) && Number.isInteger(reserved) && reserved < executions + 1)
      problems.push(
        `${name}: its reserved concurrency ${reserved} is below DISTRIBUTOR_MAX_EXECUTIONS + 1 (${executions + 1}): the schedule's invocation would be throttled while its executions run`,
      );
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
