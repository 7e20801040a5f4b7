import { randomUUID } from 'node:crypto';
import { type ChannelModel, type ConfirmChannel, connect } from 'amqplib';
import { amqpUser, amqpVhost, redactUrl } from '../../../lib/platform/config';
import { errorText } from '../../../lib/platform/errors';
import { AMQP_BOUNDS } from '../../../lib/platform/network-bounds';
import { answeredWithin, channelAnswer, closeWithin } from '../../../lib/rabbitmq/connection';
import { managementPath } from '../../../lib/rabbitmq/management';
import { doorbellName } from '../../../lib/staging/doorbell';
import { parkingQueueName, STAGING_SEPARATOR } from '../../../lib/staging/staging-names';
import { type Check, fail, ok, skipped } from './check';
import { managementGet } from './management';

/** What the broker checks need: the URLs (credentials in them), the vhost, and the targets to look at. */
export interface BrokerSettings {
  amqpUrl: string;
  managementUrl: string;
  vhost: string;
}

/** Tags that let a user call the management API (`management` is the least of them). */
const MANAGEMENT_TAGS = ['management', 'policymaker', 'monitoring', 'administrator'];

/** The permissions Fairway's broker user needs, as an operator grants them (printed by doctor and setup). */
export const brokerPermissions = {
  configure: `^(.+${STAGING_SEPARATOR}.*|fairway-parked:.+|fairway-doorbell:.+)$`,
  write: '^amq\\.default$',
  read: `^(.+${STAGING_SEPARATOR}.*|fairway-parked:.+|fairway-doorbell:.+)$`,
};

export const setPermissionsCommand = (vhost: string, user: string) =>
  `rabbitmqctl set_permissions -p '${vhost}' '${user}' '${brokerPermissions.configure}' '${brokerPermissions.write}' '${brokerPermissions.read}'`;

/**
 * The broker as the router and the distributor meet it: AMQP opens the vhost as the user, the
 * management API answers that user (a management tag), and the user may do what the functions do
 * (probed with names no queue has: a delete and a get of a queue that does not exist, a publish
 * nothing receives; nothing is created or changed). Returns the queue listing for the target checks.
 */
export async function checkBroker(settings: BrokerSettings): Promise<{ checks: Check[]; queueNames?: string[] }> {
  const { amqpUrl, managementUrl, vhost } = settings;
  const user = amqpUser(amqpUrl);
  const checks: Check[] = [];
  let connection: ChannelModel | undefined;
  try {
    connection = await connect(amqpUrl, { timeout: AMQP_BOUNDS.connectTimeoutMs });
    checks.push(
      ok('broker: AMQP', `${redactUrl(amqpUrl)} opens vhost ${JSON.stringify(amqpVhost(amqpUrl))} as ${user}`),
    );
  } catch (error) {
    checks.push(fail('broker: AMQP', amqpFailure(error, amqpUrl, user, vhost)));
  }
  try {
    checks.push(await checkManagement(managementUrl, vhost));
    const listing = await managementGet(managementUrl, `${managementPath('api', 'queues', vhost)}?columns=name`);
    const queueNames =
      listing.status === 200 && Array.isArray(listing.body)
        ? listing.body.map((q) => String((q as { name: unknown }).name))
        : undefined;
    if (listing.status !== 200 && listing.status !== 'unreachable') {
      checks.push(
        fail(
          'broker: management API on the vhost',
          `GET /api/queues/<vhost> answered ${listing.status}: the user ${user} may not see vhost ${JSON.stringify(vhost)}; ${setPermissionsCommand(vhost, user)}`,
        ),
      );
    }
    checks.push(
      connection
        ? await checkPermissions(connection, vhost, user)
        : skipped('broker: permissions', 'AMQP did not open the vhost (above)'),
    );
    return { checks, ...(queueNames ? { queueNames } : {}) };
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

function amqpFailure(error: unknown, url: string, user: string, vhost: string): string {
  const text = errorText(error);
  if (/Login was refused|ACCESS.REFUSED/.test(text)) {
    return `RabbitMQ refused the login of ${user} at ${redactUrl(url)}: check the user and its password (the secret, or the URL locally)`;
  }
  if (/ConnectionOpenOk|NOT.ALLOWED|access to vhost/i.test(text)) {
    return `${user} may not open vhost ${JSON.stringify(vhost)}: ${setPermissionsCommand(vhost, user)}`;
  }
  return `RabbitMQ does not answer at ${redactUrl(url)} (${text}): check AMQP_URL (amqps:// and port 5671 for TLS), the network path and the broker's security group`;
}

async function checkManagement(managementUrl: string, vhost: string): Promise<Check> {
  const check = 'broker: management API and user tags';
  const answer = await managementGet(managementUrl, '/api/whoami');
  if (answer.status === 'unreachable') {
    return fail(check, `${answer.reason}: check RABBITMQ_MANAGEMENT_URL (https:// on port 443 for Amazon MQ)`);
  }
  const user = decodeURIComponent(new URL(managementUrl).username) || 'guest';
  if (answer.status === 401) {
    return fail(
      check,
      `the management API refused ${user} (401): a wrong password, or the user has no management tag: rabbitmqctl set_user_tags '${user}' management`,
    );
  }
  if (answer.status !== 200) return fail(check, `GET /api/whoami answered ${answer.status}`);
  const raw = (answer.body as { tags?: unknown }).tags;
  const tags = Array.isArray(raw)
    ? raw.map(String)
    : String(raw ?? '')
        .split(',')
        .filter(Boolean);
  if (!tags.some((tag) => MANAGEMENT_TAGS.includes(tag))) {
    return fail(
      check,
      `${user} has tags [${tags.join(', ')}], none of them lets it list queues: rabbitmqctl set_user_tags '${user}' management`,
    );
  }
  return ok(check, `answers ${user} (tags: ${tags.join(', ')}) for vhost ${JSON.stringify(vhost)}`);
}

/** One probe: runs `operation` on a channel of its own (a refusal closes the channel) and says whether it was allowed. */
async function allowed(connection: ChannelModel, operation: (channel: ConfirmChannel) => Promise<unknown>) {
  const channel = await answeredWithin(connection.createConfirmChannel(), 'channel.open', (late) =>
    late.then(closeWithin, () => undefined),
  );
  channel.on('error', () => undefined);
  try {
    await channelAnswer(channel, operation(channel), 'a permission probe');
    return true;
  } catch (error) {
    // A get of a queue that does not exist: 404 once the read permission let it through.
    if ((error as { code?: number }).code === 404) return true;
    if ((error as { code?: number }).code === 403 || /closed|ACCESS.REFUSED/i.test(errorText(error))) return false;
    throw error;
  } finally {
    await closeWithin(channel);
  }
}

async function checkPermissions(connection: ChannelModel, vhost: string, user: string): Promise<Check> {
  const probe = `fairway-doctor${STAGING_SEPARATOR}/probe-${randomUUID()}`;
  const parked = parkingQueueName(`fairway-doctor-probe-${randomUUID()}`);
  const doorbell = doorbellName(`fairway-doctor-probe-${randomUUID()}`)!;
  const needs: [string, (channel: ConfirmChannel) => Promise<unknown>][] = [
    ['configure staging queues (the router declares them)', (ch) => ch.deleteQueue(probe)],
    ['read staging queues (the distributor takes from them)', (ch) => ch.get(probe, { noAck: false })],
    ['configure parking queues (the distributor declares fairway-parked:<target>)', (ch) => ch.deleteQueue(parked)],
    [
      'configure and read doorbells (the distributor declares and reads fairway-doorbell:<target>)',
      async (ch) => {
        await ch.deleteQueue(doorbell);
        await ch.get(doorbell, { noAck: true });
      },
    ],
    [
      'write to the default exchange (both publish through it)',
      async (ch) => {
        ch.publish('', probe, Buffer.from(''), { mandatory: false });
        await ch.waitForConfirms();
      },
    ],
  ];
  const refused: string[] = [];
  for (const [what, operation] of needs) if (!(await allowed(connection, operation))) refused.push(what);
  if (refused.length > 0) {
    return fail(
      'broker: permissions',
      `${user} may not ${refused.join('; ')} in vhost ${JSON.stringify(vhost)}: ${setPermissionsCommand(vhost, user)}`,
    );
  }
  return ok(
    'broker: permissions',
    `${user} may configure and read staging and parking queues and doorbells, and publish`,
  );
}
