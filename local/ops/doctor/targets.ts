import { managementPath } from '../../../lib/rabbitmq/management';
import { parseStagingQueueName } from '../../../lib/staging/staging-names';
import { type Check, fail, ok, skipped } from './check';
import { managementGet } from './management';

export interface TargetSettings {
  managementUrl: string;
  vhost: string;
  /** DISTRIBUTOR_TARGETS: a configured maxLength stands in for a broker limit. */
  configured: Readonly<Record<string, { maxLength?: number | undefined }>>;
  /** The highest AMQP priority the router gives (TENANT_PRIORITY_AMQP_PRIORITIES), when known. */
  highestPriority?: number;
}

interface QueueDetails {
  arguments?: Record<string, unknown>;
  effective_policy_definition?: Record<string, unknown> | unknown[];
}

/** The targets to check: named ones, configured ones, and those the vhost's staging queues wait for. */
export function targetsToCheck(named: readonly string[], configured: readonly string[], queueNames: readonly string[]) {
  const staged = queueNames.flatMap((name) => parseStagingQueueName(name)?.target ?? []);
  return [...new Set([...named, ...configured, ...staged])].sort();
}

/**
 * Each target queue exists with what Fairway needs: priorities (x-max-priority, at least the
 * router's highest) and a length limit in messages the distributor fills up to (its x-max-length,
 * a policy's max-length, or a maxLength in DISTRIBUTOR_TARGETS).
 */
export async function checkTargets(targets: readonly string[], settings: TargetSettings): Promise<Check[]> {
  if (targets.length === 0) {
    return [
      skipped('target queues', 'none named (--target), configured (DISTRIBUTOR_TARGETS, ROUTER_TARGETS) or staged yet'),
    ];
  }
  return Promise.all(targets.map((target) => checkTarget(target, settings)));
}

async function checkTarget(target: string, settings: TargetSettings): Promise<Check> {
  const check = `target queue ${target}`;
  const answer = await managementGet(settings.managementUrl, managementPath('api', 'queues', settings.vhost, target));
  if (answer.status === 404) {
    return fail(
      check,
      `does not exist in vhost ${JSON.stringify(settings.vhost)}: the workers declare it (with x-max-priority and x-max-length), or set DISTRIBUTOR_MISSING_TARGET=create`,
    );
  }
  if (answer.status !== 200) {
    return fail(
      check,
      answer.status === 'unreachable' ? answer.reason : `the management API answered ${answer.status}`,
    );
  }
  const queue = answer.body as QueueDetails;
  const args = queue.arguments ?? {};
  const policy = Array.isArray(queue.effective_policy_definition) ? {} : (queue.effective_policy_definition ?? {});
  const problems: string[] = [];
  const priority = args['x-max-priority'];
  if (typeof priority !== 'number') {
    problems.push(
      'has no x-max-priority: every tenant would be delivered alike (SPEC §1); declare it with x-max-priority (delete and declare it again)',
    );
  } else if (settings.highestPriority !== undefined && priority < settings.highestPriority) {
    problems.push(
      `x-max-priority ${priority} is below the router's highest priority ${settings.highestPriority}: the top levels are delivered alike`,
    );
  }
  const maxLength = args['x-max-length'] ?? policy['max-length'] ?? settings.configured[target]?.maxLength;
  if (typeof maxLength !== 'number') {
    const bytesOnly = args['x-max-length-bytes'] !== undefined || policy['max-length-bytes'] !== undefined;
    problems.push(
      `${bytesOnly ? 'has only a limit in bytes' : 'has no length limit'}: the distributor fills it up to DISTRIBUTOR_DEFAULT_MAX_LENGTH with nothing on the broker to hold it there; give it x-max-length (or a policy's max-length), or set its maxLength in DISTRIBUTOR_TARGETS`,
    );
  }
  if (problems.length > 0) return fail(check, problems.join('; '));
  return ok(check, `x-max-priority ${priority}, max length ${maxLength}`);
}
