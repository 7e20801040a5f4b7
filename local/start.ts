import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { projectRoot } from './paths';
import { runLocalStack } from './stack/run';

const usage = `usage: npm start [-- options]   (docs/operating.md "Run it locally")
  --speed N       schedules run N times faster (default 300)
  --duration S    stop S seconds after the stack is up (headless: exit 1 unless it settled)
  --headless      no view: run until the end states hold, print the final state as JSON
                  (also written to --result; \`npm start --silent -- --headless\` keeps npm's banner off stdout)
  --stage NAME    the serverless.yml stage whose schedules to follow (default dev)
  --log FILE      where the functions' logs and metrics go (default fairway-local.log)
  --result FILE   where --headless writes its final state (default fairway-local.json)
  --help          this text`;

const flags = parseFlags();
if (flags.help) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
const speed = Number(flags.speed);
const duration = flags.duration === undefined ? undefined : Number(flags.duration);
if (!(speed >= 1)) fail('--speed must be a number ≥ 1 (how many times faster than real time the schedules run)');
if (duration !== undefined && !(duration > 0)) fail('--duration must be a positive number of seconds');

function parseFlags() {
  try {
    return parseArgs({
      options: {
        speed: { type: 'string', default: '300' },
        headless: { type: 'boolean', default: false },
        duration: { type: 'string' },
        stage: { type: 'string', default: 'dev' },
        log: { type: 'string', default: join(projectRoot(), 'fairway-local.log') },
        result: { type: 'string', default: join(projectRoot(), 'fairway-local.json') },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values;
  } catch (error) {
    return fail((error as Error).message);
  }
}

function fail(message: string): never {
  process.stderr.write(`npm start: ${message}\n\n${usage}\n`);
  process.exit(2);
}

void runLocalStack({
  speed,
  headless: flags.headless === true,
  ...(duration !== undefined ? { duration } : {}),
  stage: String(flags.stage),
  logFile: String(flags.log),
  resultFile: String(flags.result),
  amqpUrl: process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
  managementUrl: process.env.RABBITMQ_MANAGEMENT_URL ?? 'http://guest:guest@127.0.0.1:15672',
});
