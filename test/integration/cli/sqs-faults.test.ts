import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  QueueDoesNotExist,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  SQSServiceException,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { runCli } from '../../../local/cli/cli';

/** SQS failures the emulator cannot produce, for `fairway dlq`: clear errors, and no message lost on a failed redrive. */
describe('fairway dlq when SQS fails (aws-sdk-client-mock)', () => {
  const sqs = mockClient(SQSClient);
  const env = {
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    FAIRWAY_STAGE: 'prod',
  };
  const dlqUrl = 'https://sqs.eu-west-1.amazonaws.com/123456789012/fairway-prod-after-process-dlq';
  const sourceUrl = 'https://sqs.eu-west-1.amazonaws.com/123456789012/fairway-prod-after-process';
  const message = (n: number, tenant: string) => ({
    MessageId: `m${n}`,
    ReceiptHandle: `r${n}`,
    Body: JSON.stringify({ target: 'worker-in', tenantId: tenant, message: { body: 'x' } }),
    Attributes: { SentTimestamp: '1700000000000', ApproximateReceiveCount: '6' },
  });
  const fault = (name: string, status: number) =>
    new SQSServiceException({
      name,
      $fault: status >= 500 ? 'server' : 'client',
      $metadata: { httpStatusCode: status },
      message: name,
    });

  beforeEach(() => {
    sqs.reset();
    sqs.on(GetQueueUrlCommand).callsFake((input: { QueueName: string }) => ({
      QueueUrl: input.QueueName.endsWith('-dlq') ? dlqUrl : sourceUrl,
    }));
    sqs.on(GetQueueAttributesCommand).resolves({
      Attributes: {
        QueueArn: 'arn:aws:sqs:eu-west-1:123456789012:fairway-prod-after-process-dlq',
        ApproximateNumberOfMessages: '2',
      },
    });
  });
  afterAll(() => sqs.restore());

  async function fairway(...argv: string[]) {
    let stderr = '';
    const code = await runCli(argv, env, { out: () => undefined, err: (t) => (stderr += t) });
    return { code, stderr };
  }

  it('names the missing queue and what to check', async () => {
    sqs
      .on(GetQueueUrlCommand)
      .rejects(new QueueDoesNotExist({ message: 'The specified queue does not exist.', $metadata: {} }));
    const { code, stderr } = await fairway('dlq');
    expect(code).toBe(1);
    expect(stderr).toContain('finding the queue fairway-prod-after-process');
    expect(stderr).toContain('does not exist: check FAIRWAY_STAGE, AWS_REGION');
  });

  it('says which permission is missing when access is denied', async () => {
    sqs.on(ReceiveMessageCommand).rejects(fault('AccessDenied', 403));
    const { code, stderr } = await fairway('dlq');
    expect(code).toBe(1);
    expect(stderr).toContain('receiving from the DLQ: access denied: the caller needs sqs:');
  });

  it('a redrive that fails half way deletes only what it sent back, and makes the rest visible again at once', async () => {
    sqs
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [message(1, 'a'), message(2, 'a'), message(3, 'b')] })
      .resolves({ Messages: [] });
    sqs.on(SendMessageCommand).resolvesOnce({ MessageId: 'copy-1' }).rejects(fault('InternalError', 500));
    sqs.on(DeleteMessageCommand).resolves({});
    sqs.on(ChangeMessageVisibilityBatchCommand).resolves({});
    const { code, stderr } = await fairway('dlq', 'redrive', '--tenant', 'a');
    expect(code).toBe(1);
    expect(stderr).toContain('sending message m2 back to the after-process queue: SQS answered 500');
    expect(sqs.commandCalls(DeleteMessageCommand).map((c) => c.args[0].input.ReceiptHandle)).toEqual(['r1']);
    // m2 (failed) and m3 (another tenant, never reached) stay in the DLQ, visible again at once
    // rather than after the scan's visibility timeout.
    const madeVisible = sqs
      .commandCalls(ChangeMessageVisibilityBatchCommand)
      .flatMap((c) => c.args[0].input.Entries ?? []);
    expect(madeVisible.map((e) => e.ReceiptHandle)).toEqual(['r2', 'r3']);
  });

  it('says the message is in both queues when the delete after a copy fails', async () => {
    sqs
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [message(1, 'a')] })
      .resolves({ Messages: [] });
    sqs.on(SendMessageCommand).resolves({ MessageId: 'copy-1' });
    sqs.on(DeleteMessageCommand).rejects(fault('RequestThrottled', 400));
    const { code, stderr } = await fairway('dlq', 'redrive', '--tenant', 'a');
    expect(code).toBe(1);
    expect(stderr).toContain('deleting message m1 from the DLQ after it was sent back (it is now in both queues)');
    expect(stderr).toContain('throttled by SQS');
  });

  it('sends a dead letter back in its tenant’s message group (a fair queue; the emulator keeps no group)', async () => {
    const grouped = { ...message(1, 'a'), Attributes: { ...message(1, 'a').Attributes, MessageGroupId: 'a' } };
    sqs
      .on(ReceiveMessageCommand)
      .resolvesOnce({ Messages: [grouped, message(2, 'a')] })
      .resolves({ Messages: [] });
    sqs.on(SendMessageCommand).resolves({ MessageId: 'copy' });
    sqs.on(DeleteMessageCommand).resolves({});
    expect((await fairway('dlq', 'redrive', '--tenant', 'a')).code).toBe(0);
    expect(sqs.commandCalls(ReceiveMessageCommand)[0]!.args[0].input.MessageSystemAttributeNames).toContain(
      'MessageGroupId',
    );
    expect(sqs.commandCalls(SendMessageCommand).map((c) => c.args[0].input.MessageGroupId)).toEqual(['a', undefined]);
  });

  it('redrives everything on AWS with an SQS message move task from the DLQ, and reports a refusal', async () => {
    sqs
      .on(StartMessageMoveTaskCommand)
      .resolvesOnce({ TaskHandle: 'task-1' })
      .rejects(fault('UnsupportedOperation', 400));
    const { code } = await fairway('dlq', 'redrive');
    expect(code).toBe(0);
    expect(sqs.commandCalls(StartMessageMoveTaskCommand)[0]!.args[0].input).toEqual({
      SourceArn: 'arn:aws:sqs:eu-west-1:123456789012:fairway-prod-after-process-dlq',
    });
    expect(sqs.commandCalls(ReceiveMessageCommand)).toHaveLength(0);
    const refused = await fairway('dlq', 'redrive');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('starting a message move task (sqs:StartMessageMoveTask): UnsupportedOperation');
  });
});
