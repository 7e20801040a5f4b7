import { readFileSync } from 'node:fs';
import { errorText } from '../../../lib/platform/errors';
import { type FunctionName, functionNames, isFunctionName, loadHandler } from '../../functions';
import { afterProcessEvent, lambdaContext, scheduledEvent, sqsEvent } from '../../lambda-events';
import { serviceFunctions } from '../../service';
import { type Command, suggestion, UsageError } from '../command';

/** The event `name` receives on AWS: an SQS batch for the router, its schedule's event for the others. */
export function sampleEvent(
  name: FunctionName,
  options: { tenant: string; target: string; workflow?: string; count: number; stage: string },
) {
  const fn = serviceFunctions(options.stage).find((f) => f.name === name)!;
  if (name === 'router') {
    const bodies = Array.from({ length: options.count }, (_, i) =>
      JSON.stringify(
        afterProcessEvent(options.target, options.tenant, options.workflow, JSON.stringify({ sample: i + 1 })),
      ),
    );
    return sqsEvent(bodies, `fairway-${options.stage}-after-process`);
  }
  return scheduledEvent(`${fn.deployedName}-schedule`);
}

export const invokeCommand: Command = {
  name: 'invoke',
  summary: 'call a function’s real handler in this process with a sample event (or --event <file.json>)',
  usage:
    `fairway invoke <function> [--event file.json] [--tenant id] [--target queue] [--workflow name] [--count n]\n` +
    `  functions: ${functionNames.join(', ')}\n` +
    '  The handler reads its settings from the environment, as on AWS (docs/configuration.md); a cleanup\n' +
    '  job runs as a dry run unless CLEANUP_DRY_RUN is set (false deletes, as a stage with cleanupDryRun: false).',
  options: {
    event: { type: 'string' },
    tenant: { type: 'string', default: 'tenant-sample' },
    target: { type: 'string', default: 'worker-input' },
    workflow: { type: 'string' },
    count: { type: 'string', default: '1' },
    stage: { type: 'string', default: 'dev' },
  },
  async run({ positionals, options, env }) {
    const [name] = positionals;
    if (!name) throw new UsageError(`invoke needs a function name, one of: ${functionNames.join(', ')}`);
    if (!isFunctionName(name)) {
      throw new UsageError(
        `unknown function ${JSON.stringify(name)}${suggestion(name, functionNames)}; functions are ${functionNames.join(', ')}`,
      );
    }
    const count = Number(options.count);
    if (!Number.isInteger(count) || count < 1 || count > 10)
      throw new UsageError('--count must be a whole number from 1 to 10 (an SQS batch)');
    const event = options.event
      ? readEventFile(String(options.event))
      : sampleEvent(name, {
          tenant: String(options.tenant),
          target: String(options.target),
          ...(options.workflow ? { workflow: String(options.workflow) } : {}),
          count,
          stage: String(options.stage),
        });
    // The handler reads process.env at cold start, as in Lambda. A cleanup job unset on dry run
    // runs as a deployed stage does by default (serverless.yml's cleanupDryRun: true), deleting nothing.
    const dryRunDefault = name.endsWith('Cleanup') && !env.CLEANUP_DRY_RUN;
    Object.assign(process.env, env, dryRunDefault ? { CLEANUP_DRY_RUN: 'true' } : {});
    const fn = serviceFunctions(String(options.stage)).find((f) => f.name === name)!;
    const handler = await loadHandler(name);
    // Close the handler's connections and pools, so the command ends as soon as it has answered.
    const result = await handler(event, lambdaContext(fn.deployedName, fn.timeoutSeconds)).finally(() =>
      handler.close?.(),
    );
    const note = dryRunDefault ? ' (a dry run: CLEANUP_DRY_RUN was unset; set it to false to delete)' : '';
    return {
      data: { function: name, event, result: result ?? null, ...(dryRunDefault ? { dryRun: true } : {}) },
      tables: [],
      text: `${name} returned${note}:\n${result === undefined ? '(nothing)' : JSON.stringify(result, null, 2)}`,
    };
  },
};

/** The event in `path`; a file that cannot be read or is not JSON is a wrong argument, named in one line. */
function readEventFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`--event: cannot read ${path} (${code === 'ENOENT' ? 'no such file' : code})`, {
      cause: error,
    });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`--event: ${path} is not JSON (${errorText(error).replace(/^SyntaxError: /, '')})`, {
      cause: error,
    });
  }
}
