import { weighsZero } from '../../../lib/distributor/planning/weights';
import { NOISY_TENANTS_PER_TARGET } from '../../../lib/distributor/waits';
import { commandEnv } from '../../ops/deployment-env';
import { cliDocumentClient } from '../../ops/dynamo';
import {
  changeControl,
  controlKeyProblem,
  listControls,
  loadControlSettings,
  parseWeight,
  requestPasses,
  revokeGrants,
  targetsOf,
} from '../../ops/tenant-controls';
import { isSeen, readSeenTenants, readStagingQueues } from '../../ops/tenant-seen';
import { readStagingWaits } from '../../ops/tenant-waits';
import { listTenants, loadTenantSettings, resetTenant } from '../../ops/tenants';
import { type Command, type CommandInput, type CommandResult, STAGE_USAGE, UsageError } from '../command';

const usage =
  'fairway tenants [--reset <tenant>] [--stage S] [--json]\n' +
  'fairway tenants pause <tenant>[/<workflow>] [--force]\n' +
  'fairway tenants resume <tenant>[/<workflow>]\n' +
  'fairway tenants weight <tenant>[/<workflow>] <weight>|clear [--force]\n' +
  '  Without a subcommand: the counters and levels (TENANT_TABLE, TENANT_PRIORITY_* as the router reads\n' +
  '  them), the run-time controls and the waits in staging the distributor last measured (DISTRIBUTOR_TABLE).\n' +
  '  --reset deletes the tenant’s counter: its next document starts again at count 0, level 1.\n' +
  '  pause: the next distributor pass moves nothing from the tenant’s (or workflow’s) staging queues;\n' +
  '  their messages stay there. resume undoes it. weight 0–1000 (decimals, 0 = no share) overrides\n' +
  '  DISTRIBUTOR_WEIGHTS on every target: <tenant> weighs the tenant among tenants, <tenant>/<workflow>\n' +
  '  the workflow within its tenant (DISTRIBUTOR_PLANNER=queue: each staging queue); clear returns to\n' +
  '  the configured weight.\n' +
  "  pause and weight 0 also revoke every live direct-routing grant (waiting out the routers' read\n" +
  '  and publish windows, as an execution does) and print how many.\n' +
  '  A tenant must have been seen (a counter in TENANT_TABLE, or a staging queue the management API\n' +
  '  lists; a workflow: a staging queue of it), or already have a control; --force stores it anyway.\n' +
  STAGE_USAGE;

export const tenantsCommand: Command = {
  name: 'tenants',
  summary: 'tenant counters, levels and run-time controls; pause|resume|weight change a tenant’s share',
  usage,
  options: { reset: { type: 'string' }, force: { type: 'boolean', default: false }, stage: { type: 'string' } },
  async run(shellInput) {
    const input = { ...shellInput, env: commandEnv(shellInput.options.stage, shellInput.env) };
    const [subcommand, ...args] = input.positionals;
    if (subcommand === undefined) return list(input);
    if (subcommand === 'pause' || subcommand === 'resume' || subcommand === 'weight') {
      return control(input, subcommand, args);
    }
    throw new UsageError(`unknown subcommand ${JSON.stringify(subcommand)}`);
  },
};

async function list({ options, env }: CommandInput): Promise<CommandResult> {
  const settings = loadTenantSettings(env);
  const doc = cliDocumentClient(settings.dynamo, env);
  try {
    if (typeof options.reset === 'string') {
      const existed = await resetTenant(doc, settings.table, settings.rules, options.reset);
      return {
        data: { reset: options.reset, existed },
        tables: [{ rows: [{ tenant: options.reset, reset: existed ? 'counter deleted' : 'had no counter' }] }],
      };
    }
    const tenants = await listTenants(doc, settings.table, settings.rules);
    // The controls and the waits live in the distributor's table; without DISTRIBUTOR_TABLE the counters still show.
    const distributorTable = env.DISTRIBUTOR_TABLE ? loadControlSettings(env).DISTRIBUTOR_TABLE : undefined;
    const [controls, recorded] = distributorTable
      ? await Promise.all([listControls(doc, distributorTable), readStagingWaits(doc, distributorTable)])
      : [];
    const { waits, noisy } = recorded ?? {};
    return {
      data: { tenants, ...(controls ? { controls } : {}), ...(recorded ? { waits, noisy } : {}) },
      tables: [
        {
          title: `Tenants (${tenants.length})`,
          rows: tenants.map((t) => ({ ...t })),
          empty: 'no tenant has a counter yet',
        },
        ...(controls
          ? [
              {
                title: 'Run-time controls (fairway tenants pause|resume|weight)',
                rows: controls.map((c) => ({ tenant: c.key, paused: c.paused ?? false, weight: c.weight })),
                empty: 'none: every tenant flows with its configured weight',
              },
            ]
          : []),
        ...(waits
          ? [
              {
                title: "Waits in staging (each target's last pass that moved from staging; its 25 longest)",
                rows: waits.map((w) => ({
                  tenant: w.tenant,
                  workflow: w.workflow,
                  target: w.target,
                  'wait (s)': w.waitSeconds,
                  'p50 (s)': w.p50Seconds,
                  measured: w.measured,
                  'measured at': w.measuredAt,
                })),
                empty: 'none measured yet (messages routed before the staged-at stamp have no wait)',
              },
            ]
          : []),
        ...(noisy
          ? [
              {
                title: `Noisiest tenants (messages staged over all their workflows, each target's top ${NOISY_TENANTS_PER_TARGET})`,
                rows: noisy.map((n) => ({ target: n.target, tenant: n.tenant, staged: n.staged, 'seen at': n.seenAt })),
                empty: 'none recorded yet (recorded with the waits)',
              },
            ]
          : []),
      ],
    };
  } finally {
    doc.destroy();
  }
}

async function control(
  { env, options }: CommandInput,
  subcommand: 'pause' | 'resume' | 'weight',
  args: string[],
): Promise<CommandResult> {
  const [key, value, ...extra] = args;
  if (key === undefined) throw new UsageError(`${subcommand} needs a <tenant> or <tenant>/<workflow>`);
  const problem = controlKeyProblem(key);
  if (problem) throw new UsageError(`the ${key.includes('/') ? 'key' : 'tenant'} ${problem}`);
  const expected = subcommand === 'weight' ? 1 : 0;
  if ((value === undefined ? 0 : 1) + extra.length !== expected) {
    throw new UsageError(
      subcommand === 'weight' ? 'weight needs a <weight> or clear' : `${subcommand} takes one tenant`,
    );
  }
  let weight: number | null | undefined;
  if (subcommand === 'weight') {
    weight = value === 'clear' ? null : parseWeight(value!);
    if (weight === undefined) {
      throw new UsageError(
        `the weight must be a number from 0 to 1000 with at most 3 decimals, or clear (got ${JSON.stringify(value)})`,
      );
    }
  }
  const settings = loadControlSettings(env);
  const doc = cliDocumentClient(settings, env);
  try {
    const existing = (await listControls(doc, settings.DISTRIBUTOR_TABLE)).some((c) => c.key === key);
    if (!existing && options.force !== true) await refuseUnseen(key, env);
    const change = subcommand === 'weight' ? { weight } : { paused: subcommand === 'pause' };
    const now = await changeControl(doc, settings.DISTRIBUTOR_TABLE, key, change);
    // A live grant would let routers publish the tenant's messages direct, past a control that weighs them 0, until it ends.
    const revoked = weighsZero(change) ? await revokeGrants(doc, settings.DISTRIBUTOR_TABLE) : undefined;
    const count = (name: string) => (revoked === undefined ? {} : { [name]: revoked });
    // Staged messages the control held back move within seconds, not at the backstop's next minute.
    const asked = revoked === undefined ? await askForPasses(key, env, doc, settings) : [];
    return {
      data: { tenant: key, ...now, ...count('revokedGrants'), ...(asked.length > 0 ? { passesRequested: asked } : {}) },
      tables: [
        { rows: [{ tenant: key, paused: now.paused ?? false, weight: now.weight, ...count('grants revoked') }] },
      ],
    };
  } finally {
    doc.destroy();
  }
}

/**
 * A control for a tenant Fairway has never seen is most likely a typo, and would sit unnoticed in the
 * controls item until that name turns up: refused unless --force says it is meant.
 */
async function refuseUnseen(key: string, env: CommandInput['env']): Promise<void> {
  const seen = await readSeenTenants(env);
  if (seen === undefined) {
    throw new UsageError(
      `cannot tell whether ${JSON.stringify(key)} has been seen: set TENANT_TABLE (its counters) or ` +
        'RABBITMQ_MANAGEMENT_URL (its staging queues), or pass --force',
    );
  }
  if (!isSeen(key, seen)) {
    const where = [seen.counters ? 'no counter' : undefined, seen.stagingQueues ? 'no staging queue' : undefined]
      .filter(Boolean)
      .join(', ');
    throw new UsageError(
      `${JSON.stringify(key)} has never been seen (${where}); check the name (fairway tenants, fairway queues), or pass --force to store the control anyway`,
    );
  }
}

/** Requests passes over the targets where the key has staging queues; none when the broker is not configured. */
async function askForPasses(
  key: string,
  env: CommandInput['env'],
  doc: Parameters<typeof requestPasses>[0],
  settings: Parameters<typeof requestPasses>[1],
): Promise<string[]> {
  if (!env.RABBITMQ_MANAGEMENT_URL) return [];
  const targets = targetsOf(key, await readStagingQueues(env));
  if (targets.length > 0) await requestPasses(doc, settings, targets);
  return targets;
}
