import { execFileSync } from 'node:child_process';
import { functionEnvironment, operatorEnv } from '../../../local/stack/environment';

// The block `npm start` prints for the operator CLI: pasted before a command in a shell, the command
// sees every variable the functions get, JSON and all (so every `fairway` command runs as pasted).
it('the printed environment, pasted into a shell, gives a command every variable the functions get', () => {
  const env = functionEnvironment(
    {
      dynamoEndpoint: 'http://127.0.0.1:4567',
      amqpUrl: 'amqp://guest:guest@127.0.0.1:5672/fairway-demo-1',
      managementUrl: "http://guest:it's@127.0.0.1:15672",
      vhost: 'fairway-demo-1',
      nxrgUrl: 'postgres://u:p@127.0.0.1:5433/nxrg',
      openxdsUrl: 'postgres://u:p@127.0.0.1:5434/openxds',
    },
    { stage: 'dev', speed: 300, documentTypes: ['referral', 'lab-result', 'discharge-letter'] },
  );
  const seen = JSON.parse(
    execFileSync('sh', ['-c', `${operatorEnv(env)} node -e 'process.stdout.write(JSON.stringify(process.env))'`], {
      env: { PATH: process.env.PATH },
      encoding: 'utf8',
    }),
  );
  for (const name of ['AMQP_URL', 'RABBITMQ_MANAGEMENT_URL', 'NXRG_DATABASE_URL', 'CLEANUP_TIMEBASED_DOCUMENT_TYPES'])
    expect(env[name]).toBeDefined();
  for (const [name, value] of Object.entries(env)) if (value !== '') expect([name, seen[name]]).toEqual([name, value]);
});
