import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { connect } from 'amqplib';
import { type EmbeddedDynamo, startDynamo, tableDefinitions } from '../harness/dynamo';
import { createTestSchema, type TestSchema } from '../harness/postgres';
import { createTestVhost, type TestVhost } from '../harness/rabbit';

// Proves the shared harness gives each test file real, isolated services.
describe('test harness', () => {
  let dynamo: EmbeddedDynamo;
  let rabbit: TestVhost;
  let pg: TestSchema;

  beforeAll(async () => {
    [dynamo, rabbit, pg] = await Promise.all([startDynamo(), createTestVhost(), createTestSchema()]);
    await dynamo.createTables();
  });
  afterAll(async () => {
    await Promise.all([dynamo?.stop(), rabbit?.delete(), pg?.drop()]);
  });

  it('creates the DynamoDB tables of infra/ with their key schemas', async () => {
    expect(tableDefinitions().map((t) => t.TableName)).toEqual(
      expect.arrayContaining(['TenantCountersTable', 'DistributorStateTable', 'CleanupStackTable']),
    );
    const { Table } = await dynamo.client.send(new DescribeTableCommand({ TableName: 'CleanupStackTable' }));
    expect(Table?.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
    await dynamo.doc.send(new PutCommand({ TableName: 'TenantCountersTable', Item: { pk: 't1', count: -3 } }));
    const { Item } = await dynamo.doc.send(new GetCommand({ TableName: 'TenantCountersTable', Key: { pk: 't1' } }));
    expect(Item).toEqual({ pk: 't1', count: -3 });
  });

  it('gives the file a vhost of its own that AMQP and the management API both see', async () => {
    const connection = await connect(rabbit.amqpUrl);
    try {
      const channel = await connection.createChannel();
      await channel.assertQueue('harness-probe', { durable: false });
      const queues = await rabbit.api<{ name: string; vhost: string }[]>(
        'GET',
        `/api/queues/${encodeURIComponent(rabbit.vhost)}?columns=name,vhost`,
      );
      expect(queues).toEqual([{ name: 'harness-probe', vhost: rabbit.vhost }]);
    } finally {
      await connection.close();
    }
  });

  it('gives the file a PostgreSQL schema of its own', async () => {
    await pg.pool.query('CREATE TABLE probe (id int)');
    const { rows } = await pg.pool.query<{ schema: string }>(
      "SELECT table_schema AS schema FROM information_schema.tables WHERE table_name = 'probe'",
    );
    expect(rows).toEqual([{ schema: pg.schema }]);
  });
});
