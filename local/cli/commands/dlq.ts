import { join } from 'node:path';
import { SQSClient } from '@aws-sdk/client-sqs';
import { z } from 'zod';
import { namingFailures } from '../../../lib/platform/aws';
import { parseEnv, setting } from '../../../lib/platform/config';
import { awsClientOptions, CLI_AWS_BOUNDS } from '../../../lib/platform/network-bounds';
import { projectRoot } from '../../paths';
import { listDeadLetters, matches, redriveDeadLetters, resolveQueues } from '../../sqs/dead-letters';
import { readFailureReasons } from '../../sqs/failure-log';
import { afterProcessQueues } from '../../sqs/settings';
import { type Command, UsageError } from '../command';

const dlqSettingsSchema = z.object({
  AWS_REGION: setting.text().default('us-east-1'),
  /** Set for the local emulator (`npm start` prints it); unset on AWS. */
  SQS_ENDPOINT: setting.optionalUrl(['http', 'https']),
  FAIRWAY_STAGE: setting.text().default('dev'),
});

export const dlqCommand: Command = {
  name: 'dlq',
  summary: 'the after-process dead-letter queue: what is in it and why; `redrive` sends messages back',
  usage:
    'fairway dlq [list] [--tenant t] [--target q] [--body] [--log FILE] [--json]\n' +
    'fairway dlq redrive [--tenant t] [--target q] [--dry-run] [--json]\n' +
    '  Queues: infra/sqs.yml’s for FAIRWAY_STAGE (default dev) in AWS_REGION, or on SQS_ENDPOINT locally.\n' +
    '  list: count (of those matching --tenant/--target; total: the whole queue), oldest, and per message\n' +
    '  its tenant, target, receives and the router’s logged reason\n' +
    '  (read from --log, default the local stack’s fairway-local.log); the body only with --body.\n' +
    '  redrive: all messages (on AWS an SQS message move task) or those of --tenant/--target (copied\n' +
    '  back and deleted one by one); --dry-run lists what would move and moves nothing.',
  options: {
    tenant: { type: 'string' },
    target: { type: 'string' },
    body: { type: 'boolean', default: false },
    'dry-run': { type: 'boolean', default: false },
    log: { type: 'string' },
  },
  async run({ positionals, options, env }) {
    const [action = 'list', ...extra] = positionals;
    if (!['list', 'redrive'].includes(action) || extra.length > 0) {
      throw new UsageError(`unknown action ${JSON.stringify([action, ...extra].join(' '))}; use list or redrive`);
    }
    if (action === 'list' && options['dry-run']) throw new UsageError('--dry-run is for redrive');
    if (action === 'redrive' && (options.body || options.log)) throw new UsageError('--body and --log are for list');
    const filter = {
      ...(typeof options.tenant === 'string' ? { tenant: options.tenant } : {}),
      ...(typeof options.target === 'string' ? { target: options.target } : {}),
    };
    const settings = parseEnv(dlqSettingsSchema, env);
    const names = afterProcessQueues(settings.FAIRWAY_STAGE);
    const client = cliSqsClient(settings, env);
    const onAws = settings.SQS_ENDPOINT === undefined;
    try {
      const queues = await resolveQueues(client, {
        sourceName: names.queueName,
        deadLetterName: names.deadLetterQueueName,
      });
      if (action === 'redrive') {
        const result = await redriveDeadLetters(client, queues, {
          filter,
          dryRun: options['dry-run'] === true,
          useMoveTask: onAws,
          longPoll: onAws,
        });
        const verb = options['dry-run'] ? 'would move' : 'moved';
        return {
          data: { dryRun: options['dry-run'] === true, ...result },
          tables: [
            {
              title:
                result.mode === 'message-move-task'
                  ? `SQS message move task ${result.taskHandle} started: about ${result.moved} messages back to ${names.queueName}`
                  : `${verb} ${result.moved} message(s) back to ${names.queueName}`,
              rows: result.messages.map(({ messageId, tenant, target, receives }) => ({
                messageId,
                tenant,
                target,
                receives,
              })),
              empty: '',
            },
          ],
        };
      }
      const reasons = await readFailureReasons(
        typeof options.log === 'string' ? options.log : join(projectRoot(), 'fairway-local.log'),
      );
      const all = await listDeadLetters(client, queues, {
        includeBody: options.body === true,
        reasons,
        longPoll: onAws,
      });
      const letters = all.filter((letter) => matches(letter, filter));
      const oldest = all[0]?.sentAt;
      return {
        data: { queue: names.deadLetterQueueName, count: letters.length, total: all.length, oldest, messages: letters },
        tables: [
          {
            title:
              `${names.deadLetterQueueName}: ${all.length} message(s)${oldest ? `, oldest sent ${oldest}` : ''}` +
              (letters.length === all.length ? '' : `; ${letters.length} match the filter`),
            rows: letters.map(({ failure, ...letter }) => ({
              ...letter,
              reason: failure ? `${failure.kind}: ${failure.reason}` : undefined,
            })),
            empty: all.length ? 'none matches the filter' : 'empty',
          },
        ],
      };
    } finally {
      client.destroy();
    }
  },
};

/** The CLI's SQS client: the emulator's endpoint when set, credentials from the environment when it has them. */
function cliSqsClient(settings: z.infer<typeof dlqSettingsSchema>, env: Record<string, string | undefined>): SQSClient {
  const {
    AWS_ACCESS_KEY_ID: accessKeyId,
    AWS_SECRET_ACCESS_KEY: secretAccessKey,
    AWS_SESSION_TOKEN: sessionToken,
  } = env;
  const client = new SQSClient({
    ...awsClientOptions(CLI_AWS_BOUNDS),
    region: settings.AWS_REGION,
    ...(settings.SQS_ENDPOINT ? { endpoint: settings.SQS_ENDPOINT } : {}),
    ...(accessKeyId && secretAccessKey
      ? { credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } }
      : {}),
  });
  return namingFailures(client, 'SQS', CLI_AWS_BOUNDS);
}
