import { stageOf } from '../../ops/deployment-env';
import { runDoctor } from '../../ops/doctor/doctor';
import type { Command } from '../command';

export const doctorCommand: Command = {
  name: 'doctor',
  summary: 'checks a deployment’s prerequisites against the live services; says what is missing and how to fix it',
  usage:
    'fairway doctor [--stage S] [--target queue …] [--json]\n' +
    '  Settings: this environment over what serverless.yml gives stage S’s functions (default FAIRWAY_STAGE,\n' +
    '  else dev). Checks each function’s configuration, the secrets, the DynamoDB tables, the broker (AMQP,\n' +
    '  management API and tags, permissions, the target queues’ priorities and length limits), the NXRG\n' +
    '  and OpenXDS schemas and indexes, and the schedules (through the AWS API, with AWS credentials).\n' +
    '  Exit 0: all well; 1: something is missing (each failure says how to fix it); 2: wrong arguments.',
  options: { stage: { type: 'string' }, target: { type: 'string', multiple: true } },
  async run({ options, env }) {
    const stage = stageOf(options.stage, env);
    const targets = Array.isArray(options.target) ? options.target : [];
    const checks = await runDoctor(env, { stage, targets });
    const failed = checks.filter((c) => c.status === 'fail').length;
    return {
      data: { stage, ok: failed === 0, checks },
      tables: [
        {
          title: `fairway doctor, stage ${stage}: ${failed === 0 ? 'all well' : `${failed} problem(s)`}`,
          rows: checks.map((c) => ({ status: c.status, check: c.check, detail: c.detail })),
        },
      ],
      exitCode: failed === 0 ? 0 : 1,
    };
  },
};
