/**
 * A local Serverless plugin that lets an alarm follow a function's timeout:
 * `${nearTimeoutMs:<function>}` is 90 % of that function's `timeout` (params resolved), in
 * milliseconds. A duration alarm at that threshold fires before invocations start timing out, and
 * keeps meaning that when a stage changes the timeout.
 */
const NEAR_TIMEOUT = 0.9;

class FairwayTimeout {
  constructor(serverless) {
    this.configurationVariablesSources = {
      nearTimeoutMs: {
        resolve: async ({ address, resolveVariable }) => {
          const seconds = Number(await resolveVariable(`self:functions.${address}.timeout`));
          if (!(seconds > 0)) {
            const ServerlessError = serverless.classes.Error;
            throw new ServerlessError(
              `Fairway refuses to package this stage:\n- ${address}: has no timeout in seconds`,
            );
          }
          return { value: Math.round(seconds * 1000 * NEAR_TIMEOUT) };
        },
      },
    };
  }
}

module.exports = FairwayTimeout;
