import type { SendMessageBatchCommandInput } from '@aws-sdk/client-sqs';
import { afterProcessEvent, sqsEvent } from '../../../local/lambda-events';
import { type RouterTestBed, sqsRecord, startRouterTestBed } from '../../harness/routing-events';
import { sendBodies, startTestQueues } from '../../harness/sqs';

/**
 * Issue 36 item 7: the after-process queue as an SQS fair queue. Fairway's producers put each
 * event in its tenant's message group; the router takes records carrying `MessageGroupId` as any
 * other and routes by the tenant in the body, whatever the group says.
 */
describe('after-process events on a fair queue (fauxqs, real RabbitMQ, dynalite)', () => {
  let bed: RouterTestBed;
  let queues: Awaited<ReturnType<typeof startTestQueues>>;

  beforeAll(async () => {
    bed = await startRouterTestBed({ queues: { 'fair-in': { durable: true, arguments: { 'x-max-priority': 10 } } } });
    queues = await startTestQueues();
  });
  afterAll(async () => {
    await queues?.stop();
    await bed?.close();
  });

  const body = (tenant: string, text: string) => JSON.stringify(afterProcessEvent('fair-in', tenant, undefined, text));

  it('the producers send each event in its tenant’s message group', async () => {
    // fauxqs 1.9.2 keeps no group on a standard queue, so what the producer sends is read on the way out.
    const sent: SendMessageBatchCommandInput[] = [];
    queues.client.middlewareStack.add(
      (next) => (args) => {
        sent.push(args.input as SendMessageBatchCommandInput);
        return next(args);
      },
      { step: 'initialize', name: 'recordSends' },
    );
    const tenantless = JSON.stringify({ target: 'fair-in', message: { body: 'none' } });
    await sendBodies(queues.client, queues.queue.url, [body('noisy', 'a'), body('clinic b', 'b'), tenantless]);
    queues.client.middlewareStack.remove('recordSends');

    expect(sent.flatMap((input) => input.Entries ?? []).map((e) => e.MessageGroupId)).toEqual([
      'noisy',
      // SQS takes only ASCII letters, digits and punctuation: one group per tenant all the same.
      expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      undefined,
    ]);
  });

  it('routes records with a MessageGroupId by the tenant in their body', async () => {
    const event = sqsEvent([body('noisy', 'noisy-1'), body('quiet', 'quiet-1')], 'fair');
    // Another producer's group that disagrees with the body: a group only orders delivery.
    const foreign = sqsRecord(body('quiet', 'quiet-2'));
    event.Records.push({ ...foreign, attributes: { ...foreign.attributes, MessageGroupId: 'noisy' } });
    expect(event.Records.map((r) => r.attributes.MessageGroupId)).toEqual(['noisy', 'quiet', 'noisy']);

    expect(await bed.service.route(event)).toEqual({ batchItemFailures: [] });
    const routed = async (queue: string) => (await bed.drain(queue)).map((m) => m.content.toString()).sort();
    expect(await routed('fair-in»/noisy')).toEqual(['noisy-1']);
    expect(await routed('fair-in»/quiet')).toEqual(['quiet-1', 'quiet-2']);
  });
});
