import {
  DynamoDBClient,
  InternalServerError,
  ProvisionedThroughputExceededException,
  ThrottlingException,
} from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  type GetCommandInput,
  PutCommand,
  type PutCommandInput,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { StackStore } from '../../../lib/cleanup/engine/stack-store';
import { DynamoLeaseStore } from '../../../lib/distributor/stores/lease-store';
import { DynamoTenantCounterStore } from '../../../lib/routing/priority/counter-store';
import { defaultRules } from '../../../lib/routing/priority/rules';
import { type EmbeddedDynamo, startDynamo } from '../../harness/dynamo';

/**
 * DynamoDB faults that dynalite cannot produce, injected with aws-sdk-client-mock in front of a
 * real (embedded) table: a throttled call wrote nothing and is retried with back-off; a 5xx may
 * have written, so only a write that can recognise its own earlier success retries it, and the
 * rest fail with the error. Assertions read the table: no lost update, no double claim.
 */

const throttled = () =>
  new ProvisionedThroughputExceededException({ message: 'Throughput exceeds the table’s capacity', $metadata: {} });
const throttledRequest = () =>
  new ThrottlingException({ message: 'Rate of requests exceeds the allowed throughput', $metadata: {} });
const serverFault = () =>
  new InternalServerError({ message: 'Internal server error', $metadata: { httpStatusCode: 500 } });

describe('DynamoDB throttling and 5xx on Fairway’s stores (aws-sdk-client-mock over dynalite)', () => {
  let dynamo: EmbeddedDynamo;
  /** The client the stores use; its `send` is replaced by the mock, which passes calls on to `dynamo.doc`. */
  let doc: DynamoDBDocumentClient;
  let mock: ReturnType<typeof mockClient>;

  beforeAll(async () => {
    dynamo = await startDynamo();
    await dynamo.createTables();
  });
  afterAll(() => dynamo?.stop());
  /** Each command the stores send, passed on to the real table. */
  const toTable = {
    update: (input: UpdateCommandInput) => dynamo.doc.send(new UpdateCommand(input)),
    put: (input: PutCommandInput) => dynamo.doc.send(new PutCommand(input)),
    get: (input: GetCommandInput) => dynamo.doc.send(new GetCommand(input)),
  };
  /** A call that reaches the table, then its answer is lost to a 5xx: it was applied, the caller cannot know. */
  const appliedThen5xx =
    <I>(send: (input: I) => Promise<unknown>) =>
    async (input: I) => {
      await send(input);
      throw serverFault();
    };

  beforeEach(() => {
    doc = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: dynamo.endpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
      }),
    );
    mock = mockClient(doc);
    // Every call reaches the real table unless a test says otherwise.
    mock.on(UpdateCommand).callsFake(toTable.update);
    mock.on(PutCommand).callsFake(toTable.put);
    mock.on(GetCommand).callsFake(toTable.get);
  });
  afterEach(() => mock.restore());

  const item = async (table: string, key: Record<string, string>) =>
    (await dynamo.doc.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }))).Item;

  describe('tenant counter (router)', () => {
    const store = () => new DynamoTenantCounterStore(doc, 'TenantCountersTable', defaultRules);
    /** Seeds a counter straight on the table, past the mock. */
    const seedCheck = (tenant: string, now: number) =>
      new DynamoTenantCounterStore(dynamo.doc, 'TenantCountersTable', defaultRules).check(tenant, 1, now);

    it('retries a throttled check with back-off and applies it exactly once', async () => {
      const now = Date.now();
      await seedCheck('throttled-tenant', now);
      mock.on(UpdateCommand).rejectsOnce(throttled()).rejectsOnce(throttledRequest()).callsFake(toTable.update);
      const result = await store().check('throttled-tenant', 3, now + 1);
      expect(result).toMatchObject({ counts: [-1, -2, -3] });
      expect((await item('TenantCountersTable', { pk: 'throttled-tenant' }))?.pendingCount).toBe(-3);
    });

    it('gives up on a table that stays throttled, with the throttling error, and writes nothing', async () => {
      mock.on(UpdateCommand).rejects(throttled());
      mock.on(PutCommand).rejects(throttled());
      await expect(store().check('always-throttled', 1, Date.now())).rejects.toMatchObject({
        name: 'ProvisionedThroughputExceededException',
      });
      expect(await item('TenantCountersTable', { pk: 'always-throttled' })).toBeUndefined();
    });

    it('does not retry a 5xx on the ADD (it may have been applied): the check fails and the record is retried by SQS', async () => {
      const now = Date.now();
      await seedCheck('server-fault-tenant', now);
      // The ADD reached the table, then the answer was lost.
      mock.on(UpdateCommand).callsFakeOnce(appliedThen5xx(toTable.update)).callsFake(toTable.update);
      await expect(store().check('server-fault-tenant', 1, now + 1)).rejects.toMatchObject({
        name: 'InternalServerError',
      });
      // Applied once, not twice: a retry inside the store would have made it -2.
      expect((await item('TenantCountersTable', { pk: 'server-fault-tenant' }))?.pendingCount).toBe(-1);
    });
  });

  describe('distributor lease', () => {
    const state = () => new DynamoLeaseStore(doc, 'DistributorStateTable');

    it('retries a throttled acquire and holds the lease', async () => {
      mock.on(PutCommand).rejectsOnce(throttled()).callsFake(toTable.put);
      expect(await state().acquireLease('t-throttled', 'pass-a', 1000, 61_000)).toBe(true);
      expect(await item('DistributorStateTable', { pk: 'lease#t-throttled' })).toMatchObject({ owner: 'pass-a' });
    });

    it('a lease whose put succeeded but answered 5xx is the caller’s after the retry, and no one else’s', async () => {
      mock.on(PutCommand).callsFakeOnce(appliedThen5xx(toTable.put)).callsFake(toTable.put);
      expect(await state().acquireLease('t-5xx', 'pass-a', 1000, 61_000)).toBe(true);
      expect(await state().acquireLease('t-5xx', 'pass-b', 2000, 62_000)).toBe(false);
      expect(await item('DistributorStateTable', { pk: 'lease#t-5xx' })).toMatchObject({ owner: 'pass-a' });
    });

    it('a 5xx while another pass holds the lease is never read as ours', async () => {
      await dynamo.doc.send(
        new PutCommand({
          TableName: 'DistributorStateTable',
          Item: { pk: 'lease#t-held', owner: 'pass-b', expiresAt: 99_000 },
        }),
      );
      mock.on(PutCommand).rejectsOnce(serverFault()).callsFake(toTable.put);
      expect(await state().acquireLease('t-held', 'pass-a', 1000, 61_000)).toBe(false);
      expect(await item('DistributorStateTable', { pk: 'lease#t-held' })).toMatchObject({ owner: 'pass-b' });
    });
  });

  describe('cleanup stack claim', () => {
    const table = 'CleanupStackTable';
    const seed = (job: string, sk: string) =>
      dynamo.doc.send(
        new PutCommand({ TableName: table, Item: { pk: job, sk, kind: 'k', payload: '{}', attempts: 0 } }),
      );
    const claim = (owner: string, now = 1000) => ({ owner, now, leaseUntil: now + 300_000 });

    it('retries a throttled claim: the operation is claimed once, its attempt counted once', async () => {
      await seed('job-throttled', 'op#1');
      mock.on(UpdateCommand).rejectsOnce(throttled()).callsFake(toTable.update);
      const claimed = await new StackStore(doc, table, 'job-throttled').claims.claim('op#1', claim('step-a'));
      expect(claimed).toMatchObject({ owner: 'step-a', attempts: 1 });
    });

    it('a claim applied behind a 5xx is recognised as ours on retry; a second step cannot take it', async () => {
      await seed('job-5xx', 'op#1');
      mock.on(UpdateCommand).callsFakeOnce(appliedThen5xx(toTable.update)).callsFake(toTable.update);
      const store = new StackStore(doc, table, 'job-5xx');
      expect(await store.claims.claim('op#1', claim('step-a'))).toMatchObject({ owner: 'step-a', attempts: 1 });
      expect(await store.claims.claim('op#1', claim('step-b', 2000))).toBeUndefined();
      expect(await item(table, { pk: 'job-5xx', sk: 'op#1' })).toMatchObject({ owner: 'step-a', attempts: 1 });
    });
  });
});
