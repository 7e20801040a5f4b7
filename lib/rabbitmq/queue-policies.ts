/**
 * A queue's effective length limits as RabbitMQ resolves them from its arguments, the policy and
 * the operator policy that apply to it (rabbit_policy, rabbit_amqqueue_process, rabbit_quorum_queue;
 * 3.10–4.x):
 * - one policy applies, the matching one of highest priority that the queue type supports;
 *   likewise one operator policy;
 * - `max-length` and `max-length-bytes`: the smallest of argument, policy and operator policy;
 * - `overflow`: an operator policy's wins over a policy's; a classic queue's `x-overflow` argument
 *   wins over both, while for a quorum queue the policy's wins over the argument (and a quorum
 *   queue reads `reject-publish-dlx` as its default, drop-head).
 */

export interface Policy {
  name: string;
  /** A regular expression on queue names (the broker's PCRE, matched on the name's bytes). */
  pattern: string;
  applyTo: string;
  priority: number;
  definition: Readonly<Record<string, unknown>>;
}

export interface QueuePolicies {
  policies: readonly Policy[];
  operatorPolicies: readonly Policy[];
}

export interface QueueToResolve {
  name: string;
  /** `classic`, `quorum`, …; undefined when unknown (declared without `x-queue-type`: the vhost's default). */
  type: string | undefined;
  arguments: Readonly<Record<string, unknown>>;
}

export type Overflow = 'drop-head' | 'reject-publish' | 'reject-publish-dlx';

export interface LengthLimits {
  maxLength?: number;
  maxLengthBytes?: number;
  overflow: Overflow;
  /** The policies and operator policies the limits came from, by name. */
  policies: string[];
}

/**
 * The queue's effective length limits. Where the broker's choice is not known here (an unknown
 * type, policies tied on priority, a quorum queue's), the limits are the worst of the
 * possibilities: the smallest limit, and drop-head if any possibility drops.
 */
export function effectiveLengthLimits(
  queue: QueueToResolve,
  { policies, operatorPolicies }: QueuePolicies,
): LengthLimits {
  const policy = worstOf(applying(queue, policies));
  const operator = worstOf(applying(queue, operatorPolicies));
  const types = queue.type === undefined ? ['classic', 'quorum'] : [queue.type];
  const overflows = types.map((type) => overflowOf(type, queue.arguments, policy, operator));
  return {
    ...definedOnly({
      maxLength: smallest([
        queue.arguments['x-max-length'],
        policy.definition['max-length'],
        operator.definition['max-length'],
      ]),
      maxLengthBytes: smallest([
        queue.arguments['x-max-length-bytes'],
        policy.definition['max-length-bytes'],
        operator.definition['max-length-bytes'],
      ]),
    }),
    overflow: overflows.includes('drop-head') ? 'drop-head' : overflows[0]!,
    policies: [...policy.names, ...operator.names],
  };
}

/** How these limits drop a waiting message (`max-length 5 with overflow drop-head`), or undefined when they cannot. */
export function howLimitsDrop(limits: LengthLimits): string | undefined {
  if (limits.overflow !== 'drop-head') return undefined;
  const set = [
    limits.maxLength === undefined ? undefined : `max-length ${limits.maxLength}`,
    limits.maxLengthBytes === undefined ? undefined : `max-length-bytes ${limits.maxLengthBytes}`,
  ].filter((limit) => limit !== undefined);
  return set.length === 0 ? undefined : `${set.join(' and ')} with overflow drop-head`;
}

interface Resolved {
  names: string[];
  definition: Readonly<Record<string, unknown>>;
}

/**
 * The policies that may apply: for a classic queue the matching ones of the highest priority
 * (usually one). A quorum queue skips a policy with a key it does not support, so a lower one may
 * apply instead: for it, or an unknown type, every matching policy is a possibility.
 */
function applying(queue: QueueToResolve, policies: readonly Policy[]): Policy[] {
  const matching = policies.filter((p) => appliesToQueues(p.applyTo, queue.type) && matches(p.pattern, queue.name));
  if (queue.type !== 'classic') return matching;
  const top = Math.max(...matching.map((p) => p.priority));
  return matching.filter((p) => p.priority === top);
}

function appliesToQueues(applyTo: string, type: string | undefined): boolean {
  if (applyTo === 'all' || applyTo === 'queues') return true;
  // 3.12 and later can aim a policy at one queue type.
  return type === undefined ? applyTo.endsWith('_queues') : applyTo === `${type}_queues`;
}

/**
 * The broker matches a policy's pattern on the name's UTF-8 bytes; the same bytes as Latin-1
 * characters let a JavaScript RegExp do so. A pattern JavaScript cannot compile counts as matching.
 */
function matches(pattern: string, name: string): boolean {
  let expression: RegExp;
  try {
    expression = new RegExp(Buffer.from(pattern, 'utf8').toString('latin1'));
  } catch {
    return true;
  }
  return expression.test(Buffer.from(name, 'utf8').toString('latin1'));
}

/** Tied policies as one: the smallest of each limit, drop-head if any of them sets it. */
function worstOf(policies: readonly Policy[]): Resolved {
  const definition: Record<string, unknown> = {};
  for (const key of ['max-length', 'max-length-bytes']) {
    const value = smallest(policies.map((p) => p.definition[key]));
    if (value !== undefined) definition[key] = value;
  }
  const overflows = policies.map((p) => p.definition.overflow).filter((o) => o !== undefined);
  if (overflows.length > 0) definition.overflow = overflows.includes('drop-head') ? 'drop-head' : overflows[0];
  return { names: policies.map((p) => p.name), definition };
}

function overflowOf(
  type: string,
  args: Readonly<Record<string, unknown>>,
  policy: Resolved,
  operator: Resolved,
): Overflow {
  const fromPolicies = operator.definition.overflow ?? policy.definition.overflow;
  const fromArgument = args['x-overflow'];
  if (type === 'quorum') {
    const overflow = fromPolicies ?? fromArgument;
    return overflow === 'reject-publish' ? 'reject-publish' : 'drop-head';
  }
  const overflow = fromArgument ?? fromPolicies;
  return overflow === 'reject-publish' || overflow === 'reject-publish-dlx' ? overflow : 'drop-head';
}

function smallest(values: readonly unknown[]): number | undefined {
  const numbers = values.filter((v): v is number => typeof v === 'number');
  return numbers.length === 0 ? undefined : Math.min(...numbers);
}

function definedOnly<T extends object>(object: T): Partial<T> {
  return Object.fromEntries(Object.entries(object).filter(([, v]) => v !== undefined)) as Partial<T>;
}
