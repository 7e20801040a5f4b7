import { z } from 'zod';
import { cleanupConfigSchema } from '../../../lib/cleanup/config';
import { type CleanupJobName, cleanupJobNames } from '../../../lib/cleanup/jobs';
import { createCleanupOperator } from '../../../lib/cleanup/operator';
import { parseEnv } from '../../../lib/platform/config';
import { dynamoSettings } from '../../../lib/settings/common';
import { commandEnv } from '../../ops/deployment-env';
import { cliDocumentClient } from '../../ops/dynamo';
import { type Command, STAGE_USAGE, UsageError } from '../command';

const stackSettingsSchema = z.object({ ...dynamoSettings, CLEANUP_TABLE: cleanupConfigSchema.shape.CLEANUP_TABLE });

export const stackCommand: Command = {
  name: 'stack',
  summary: 'a cleanup job’s stack: size, top, counts by kind, dead letters; --requeue/--drop a dead letter',
  usage:
    `fairway stack [<job>] [--top n] [--requeue <sk> | --drop <sk>] [--stage S] [--json]\n` +
    `  jobs: ${cleanupJobNames.join(', ')} (without a job: the size of each)\n` +
    '  Reads CLEANUP_TABLE. --requeue puts a dead-lettered operation back on top with its attempts reset;\n' +
    '  --drop deletes it for good.\n' +
    STAGE_USAGE,
  options: {
    top: { type: 'string', default: '10' },
    requeue: { type: 'string' },
    drop: { type: 'string' },
    stage: { type: 'string' },
  },
  async run({ positionals, options, env: shellEnv }) {
    const env = commandEnv(options.stage, shellEnv);
    const job = positionals[0] as CleanupJobName | undefined;
    if (job !== undefined && !cleanupJobNames.includes(job)) {
      throw new UsageError(`unknown job ${JSON.stringify(job)}; jobs are ${cleanupJobNames.join(', ')}`);
    }
    if ((options.requeue || options.drop) && !job) throw new UsageError('--requeue and --drop need a job');
    if (options.requeue && options.drop) throw new UsageError('give either --requeue or --drop, not both');
    const top = Number(options.top);
    if (!Number.isInteger(top) || top < 0) throw new UsageError('--top must be a whole number');
    const settings = parseEnv(stackSettingsSchema, env);
    const doc = cliDocumentClient(settings, env);
    const operator = createCleanupOperator(doc, settings.CLEANUP_TABLE);
    try {
      if (!job) {
        const jobs = await Promise.all(
          cleanupJobNames.map(async (name) => {
            const [stack, dead] = await Promise.all([operator.stack(name, 0), operator.deadLetters(name)]);
            return { job: name, size: stack.size, claimed: stack.claimed, deadLetters: dead.length };
          }),
        );
        return { data: { jobs }, tables: [{ title: 'Cleanup stacks', rows: jobs }] };
      }
      const named = options.requeue ?? options.drop;
      if (typeof named === 'string' && !(await operator.deadLetters(job)).some((dead) => dead.sk === named)) {
        throw new UsageError(
          `job ${job} has no dead-lettered operation ${JSON.stringify(named)} (\`fairway stack ${job}\` lists them)`,
        );
      }
      if (typeof options.requeue === 'string') {
        const { sk } = await operator.requeue(job, options.requeue);
        return {
          data: { job, requeued: options.requeue, as: sk },
          tables: [{ rows: [{ job, requeued: options.requeue, as: sk }] }],
        };
      }
      if (typeof options.drop === 'string') {
        await operator.drop(job, options.drop);
        return { data: { job, dropped: options.drop }, tables: [{ rows: [{ job, dropped: options.drop }] }] };
      }
      const [stack, deadLetters] = await Promise.all([operator.stack(job, top), operator.deadLetters(job)]);
      return {
        data: { ...stack, deadLetters },
        tables: [
          {
            title: `${job}: ${stack.size} operations (${stack.claimed} claimed)`,
            rows: Object.entries(stack.byKind).map(([kind, count]) => ({ kind, count })),
            empty: 'empty stack',
          },
          {
            title: `Top ${top}`,
            rows: stack.top.map(({ sk, kind, attempts, claimedUntil, lastError }) => ({
              sk,
              kind,
              attempts,
              claimedUntil,
              lastError,
            })),
          },
          {
            title: 'Dead letters',
            rows: deadLetters.map(({ sk, kind, attempts, error, deadAt }) => ({ sk, kind, attempts, deadAt, error })),
          },
        ],
      };
    } finally {
      doc.destroy();
    }
  },
};
