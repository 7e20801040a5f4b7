import type { Env } from '../../../lib/platform/config';
import { deploymentEnv } from '../deployment-env';
import { checkBroker } from './broker';
import type { Check } from './check';
import { skipped } from './check';
import { checkDatabases } from './databases';
import { checkTables } from './dynamo';
import { checkSchedules, type ScheduleClients } from './schedules';
import { resolveSecrets } from './secrets';
import { loadConfigurations } from './settings';
import { checkTargets, targetsToCheck } from './targets';

export interface DoctorOptions {
  stage: string;
  /** Target queues to check beside those configured and staged. */
  targets: readonly string[];
  /** For tests: stand-ins for the Lambda and EventBridge clients. */
  scheduleClients?: ScheduleClients;
}

/**
 * `fairway doctor`: a deployment's prerequisites checked against the live services, in deploy
 * order. Settings are the shell's environment over what serverless.yml gives the stage's functions.
 */
export async function runDoctor(shellEnv: Env, options: DoctorOptions): Promise<Check[]> {
  const env = deploymentEnv(shellEnv, options.stage);
  const configurations = loadConfigurations(env);
  const checks: Check[] = [...configurations.checks];

  const secrets = await resolveSecrets(env);
  checks.push(...secrets.checks);
  const live = secrets.env;

  checks.push(...(await checkTables(env)));

  const rabbit = configurations.router ?? configurations.distributor;
  if (rabbit) {
    const broker = await checkBroker({
      amqpUrl: live.AMQP_URL!,
      managementUrl: live.RABBITMQ_MANAGEMENT_URL!,
      vhost: rabbit.RABBITMQ_VHOST,
    });
    checks.push(...broker.checks);
    const configured = configurations.distributor?.DISTRIBUTOR_TARGETS ?? {};
    const targets = targetsToCheck(
      options.targets,
      [...Object.keys(configured), ...Object.keys(configurations.router?.ROUTER_TARGETS ?? {})],
      broker.queueNames ?? [],
    );
    const priorities = configurations.router
      ? Object.values(configurations.router.TENANT_PRIORITY_AMQP_PRIORITIES)
      : [];
    checks.push(
      ...(await checkTargets(targets, {
        managementUrl: live.RABBITMQ_MANAGEMENT_URL!,
        vhost: rabbit.RABBITMQ_VHOST,
        configured,
        ...(priorities.length > 0 ? { highestPriority: Math.max(...priorities) } : {}),
      })),
    );
  } else {
    checks.push(skipped('broker', 'the router and distributor configurations are invalid (above)'));
  }

  if (configurations.jobs.length > 0) checks.push(...(await checkDatabases(configurations.jobs, live)));
  else checks.push(skipped('NXRG and OpenXDS schemas', 'every cleanup configuration is invalid (above)'));

  checks.push(...(await checkSchedules(options.stage, env, options.scheduleClients)));
  return checks;
}
