import { ConfigError } from '../../platform/errors';

/**
 * What tenants' shares are equal in (DISTRIBUTOR_FAIR_BY, docs/distributor.md "Fair by work"):
 * messages; bytes (a message weighs its body size); or a cost the producers declare in a header
 * (a positive number; a message without one weighs `missing`).
 */
export type FairBy = { unit: 'messages' } | { unit: 'bytes' } | { unit: 'declared'; header: string; missing: number };

const DECLARED = /^header:([^=\s]+)(?:=(.+))?$/;

/** Why DISTRIBUTOR_FAIR_BY's text is not a FairBy (the cold start's check), or undefined when it is one. Pure. */
export function fairByError(text: string): string | undefined {
  const parsed = parseFairBy(text);
  return 'error' in parsed ? parsed.error : undefined;
}

/** DISTRIBUTOR_FAIR_BY's text as a FairBy; a text fairByError refuses throws a ConfigError. */
export function fairByOf(text: string): FairBy {
  const parsed = parseFairBy(text);
  if ('error' in parsed) throw new ConfigError([`DISTRIBUTOR_FAIR_BY ${parsed.error}`]);
  return parsed;
}

function parseFairBy(text: string): FairBy | { error: string } {
  if (text === 'messages' || text === 'bytes') return { unit: text };
  const declared = DECLARED.exec(text);
  if (!declared) return { error: 'must be messages, bytes, or header:<name>[=<cost of a message without it>]' };
  const missing = declared[2] === undefined ? 1 : Number(declared[2]);
  if (!Number.isFinite(missing) || missing <= 0) {
    return { error: `the cost after "=" must be a positive number (got ${JSON.stringify(declared[2])})` };
  }
  return { unit: 'declared', header: declared[1]!, missing };
}

/** The work one message brings in the unit: 1, its body bytes, or its declared cost. Pure. */
export const messageWork =
  (fairBy: FairBy) =>
  (message: { content: { length: number }; properties: { headers?: Record<string, unknown> } }): number => {
    if (fairBy.unit === 'messages') return 1;
    if (fairBy.unit === 'bytes') return message.content.length;
    return declaredCost(message.properties.headers?.[fairBy.header]) ?? fairBy.missing;
  };

/** A header's value as a cost: a positive finite number, or a string of one (AMQP clients send both). */
function declaredCost(value: unknown): number | undefined {
  const cost =
    typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  return Number.isFinite(cost) && cost > 0 ? cost : undefined;
}

/** Shares are equal in work (bytes or a declared cost), not in messages: the planner carries deficits, the movers count work. */
export const byWork = (fairBy: FairBy | undefined): fairBy is Exclude<FairBy, { unit: 'messages' }> =>
  fairBy !== undefined && fairBy.unit !== 'messages';

/** What the movers count of each moved message when shares are equal in work; undefined by messages. */
export const workCounter = (fairBy: FairBy | undefined) => (byWork(fairBy) ? messageWork(fairBy) : undefined);
