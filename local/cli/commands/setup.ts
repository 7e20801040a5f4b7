import { FairwayError } from '../../../lib/platform/errors';
import { deploymentEnv, stageOf } from '../../ops/deployment-env';
import { resolveSecrets } from '../../ops/doctor/secrets';
import { loadSetupSettings, runSetup } from '../../ops/setup';
import type { Command } from '../command';

export const setupCommand: Command = {
  name: 'setup',
  summary: 'creates what Fairway owns in NXRG (the deletion record and its indexes); prints the broker’s part',
  usage:
    'fairway setup [--stage S] [--dry-run] [--json]\n' +
    '  Creates, idempotently, NXRG’s deletion-record table and its indexes for NXRG_NAMES (each index\n' +
    '  CREATE INDEX CONCURRENTLY: writes go on while it builds), and drops an earlier version’s pending\n' +
    '  index once its replacement is there. Reads NXRG_DATABASE_URL (with NXRG_DATABASE_SECRET_ARN’s\n' +
    '  credentials) from this environment over serverless.yml’s for stage S. Never touches the registry’s\n' +
    '  own tables or the broker: it prints the indexes the registry lacks and the broker user’s commands.\n' +
    '  --dry-run says what it would do and does nothing.',
  options: { stage: { type: 'string' }, 'dry-run': { type: 'boolean', default: false } },
  async run({ options, env: shellEnv }) {
    const stage = stageOf(options.stage, shellEnv);
    const env = deploymentEnv(shellEnv, stage);
    const settings = loadSetupSettings(env);
    const secrets = await resolveSecrets(env);
    const failed = secrets.checks.find((c) => c.status === 'fail' && c.check.includes('NXRG'));
    if (failed) throw new FairwayError(`${failed.check}: ${failed.detail}`);
    const result = await runSetup(
      { ...settings, NXRG_DATABASE_URL: secrets.env.NXRG_DATABASE_URL ?? settings.NXRG_DATABASE_URL },
      { dryRun: options['dry-run'] === true },
    );
    const lines = [
      `NXRG (stage ${stage}): ${result.changed ? 'changed' : 'nothing to change'}`,
      ...result.actions.map((a) => `  ${a.action.padEnd(13)} ${a.object}`),
      '',
      result.registryStatements.length
        ? 'The registry’s own indexes the cleanup jobs need, for its DBA (setup does not touch its tables):'
        : 'The registry has every index the cleanup jobs need.',
      ...result.registryStatements.map((sql) => `  ${sql}`),
      '',
      'The broker side, for its operator (setup never changes the broker):',
      ...result.brokerCommands.map((command) => `  ${command}`),
    ];
    return { data: { stage, ...result }, tables: [], text: lines.join('\n') };
  },
};
