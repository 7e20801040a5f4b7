import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { projectRoot } from './paths';
import { runLocalStack } from './stack/run';

// `npm start [-- --speed N --duration S --headless --log FILE]`: README "Operating Fairway".
const { values: flags } = parseArgs({
  options: {
    speed: { type: 'string', default: '300' },
    headless: { type: 'boolean', default: false },
    duration: { type: 'string' },
    stage: { type: 'string', default: 'dev' },
    log: { type: 'string', default: join(projectRoot(), 'fairway-local.log') },
  },
});
const speed = Number(flags.speed);
const duration = flags.duration === undefined ? undefined : Number(flags.duration);
if (!(speed >= 1)) fail('--speed must be a number ≥ 1 (how many times faster than real time the schedules run)');
if (duration !== undefined && !(duration > 0)) fail('--duration must be a positive number of seconds');

function fail(message: string): never {
  process.stderr.write(`npm start: ${message}\n`);
  process.exit(2);
}

void runLocalStack({
  speed,
  headless: flags.headless === true,
  ...(duration !== undefined ? { duration } : {}),
  stage: String(flags.stage),
  logFile: String(flags.log),
  amqpUrl: process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
  managementUrl: process.env.RABBITMQ_MANAGEMENT_URL ?? 'http://guest:guest@127.0.0.1:15672',
});
