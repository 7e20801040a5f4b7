// Temporary: where a pass over N one-message queues spends its time (not committed).
import { connect } from 'amqplib';
import { buildDistributor, warningReport } from '../lib/distributor/service';
import { AmqpSession } from '../lib/rabbitmq/connection';
import { ManagementClient } from '../lib/rabbitmq/management';
import { documentClient } from '../lib/aws/dynamo';
import { benchDistributorConfig } from '../bench/lib/distributor';
import { delayedVhost, startBenchDynamo } from '../bench/lib/hops';
import { holding, waitForListing } from '../bench/lib/listing';
import { createBenchVhost } from '../bench/lib/services';
import { publishConfirmed } from '../bench/lib/amqp';

async function main() {
  const n = Number(process.argv[2] ?? 1000);
  const delay = Number(process.argv[3] ?? 1);
  const extra = JSON.parse(process.argv[4] ?? '{}');
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
  const direct = await createBenchVhost('profile');
  const model = await connect(direct.amqpUrl, { noDelay: true });
  const ch = await model.createConfirmChannel();
  const target = 'dataprocessing-entity-extract-in';
  await ch.assertQueue(target, { durable: true, arguments: { 'x-max-priority': 9 } });
  const staging = Array.from({ length: n }, (_, i) => `${target}»/tenant${i}/workflow`);
  for (const s of staging) await ch.assertQueue(s, { durable: true });
  await publishConfirmed(ch, staging.map((queue) => ({ queue, content: Buffer.from('{}') })));
  const mgmt = new ManagementClient(direct.managementUrl, direct.vhost);
  await waitForListing(mgmt, holding(staging, 1));
  const vhost = await delayedVhost(direct, delay);
  const dynamo = await startBenchDynamo(delay);
  const config = benchDistributorConfig(vhost, dynamo.endpoint, { DISTRIBUTOR_DEFAULT_MAX_LENGTH: String(2 * n), ...extra });
  const amqp = new AmqpSession(config.AMQP_URL);
  const management = new ManagementClient(config.RABBITMQ_MANAGEMENT_URL, config.RABBITMQ_VHOST);
  const t = { list: 0, opens: 0, openMs: 0 };
  const t0 = Date.now();
  const d = buildDistributor(
    config,
    {
      openChannel: async () => {
        const s = Date.now();
        const c = await amqp.openConfirmChannel();
        t.opens++;
        t.openMs += Date.now() - s;
        return c;
      },
      listQueues: async () => {
        const s = Date.now();
        const r = await management.listQueues();
        t.list += Date.now() - s;
        console.log(`listed ${r.length} at +${Date.now() - t0} ms`);
        return r;
      },
      doc: documentClient(config),
    },
    warningReport((m, x) => console.log(m, JSON.stringify(x).slice(0, 200))),
  );
  const started = Date.now();
  const pass = await d.runPass(60_000);
  const ms = Date.now() - started;
  const stops: Record<string, number> = {};
  for (const q of pass.targets[0]?.queues ?? []) stops[q.stopReason ?? '?'] = (stops[q.stopReason ?? '?'] ?? 0) + 1;
  console.log(JSON.stringify({ n, delay, ms, moved: pass.moved, planned: pass.planned, ...t, stops }));
  await amqp.close();
  await model.close();
  await dynamo.stop();
  await vhost.stopDelay();
  await direct.delete();
}
main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
