/**
 * Loads functions/`name` as Lambda does at cold start, with `env` as the whole environment (restored
 * after); returns what the module threw, or undefined when it started. A fresh module registry per
 * cold start, so errors are told apart by name, not class.
 */
export function coldStart(name: string, env: NodeJS.ProcessEnv): Error | undefined {
  const saved = process.env;
  process.env = env;
  let error: Error | undefined;
  try {
    jest.isolateModules(() => {
      try {
        require(`../../functions/${name}`);
      } catch (caught) {
        error = caught as Error;
      }
    });
  } finally {
    process.env = saved;
  }
  return error;
}
