/**
 * The embedded local AWS stack: each emulator answers the AWS SDK as AWS does (including the
 * failures the engine relies on), the resource helpers are idempotent, and stop() leaves nothing
 * running.
 */
import {
  ConditionalCheckFailedException,
  CreateTableCommand,
  DynamoDBClient,
  GetItemCommand,
  ListTablesCommand,
  PutItemCommand,
  TransactionCanceledException,
  TransactWriteItemsCommand,
} from '@aws-sdk/client-dynamodb';
import { GetRecordsCommand, GetShardIteratorCommand, ListShardsCommand, PutRecordCommand } from '@aws-sdk/client-kinesis';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { CreateQueueCommand, ListQueuesCommand } from '@aws-sdk/client-sqs';
import { connectionFromEnv, createClients } from '../../lib/aws/clients';
import { ensureBucket, ensureStateTable, ensureStream, STATE_TABLE_PARTITION_KEY, STATE_TABLE_SORT_KEY } from '../../lib/local/resources';
import { ALL_LOCAL_SERVICES, startLocalStack } from '../../lib/local/stack';
import { testClients, uniqueName } from '../helpers/stack';

const { s3, dynamodb, kinesis } = testClients();

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

describe('the local AWS stack', () => {
  describe('when a test stores an object in S3', () => {
    it('reads the same bytes back', async () => {
      const bucket = uniqueName('local-stack');
      await ensureBucket(s3, bucket);
      await ensureBucket(s3, bucket); // idempotent
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'a/b.json', Body: '{"x":1}\n' }));
      const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'a/b.json' }));
      expect(await got.Body!.transformToString()).toBe('{"x":1}\n');
    });
  });

  describe('when a test writes to a DynamoDB state table', () => {
    const table = uniqueName('local-stack');
    const key = (sk: string) => ({ [STATE_TABLE_PARTITION_KEY]: { S: 'q1' }, [STATE_TABLE_SORT_KEY]: { S: sk } });

    beforeAll(async () => {
      await ensureStateTable(dynamodb, table);
      await ensureStateTable(dynamodb, table); // idempotent
    });

    it('reads the item back', async () => {
      await dynamodb.send(new PutItemCommand({ TableName: table, Item: { ...key('a'), v: { N: '1' } } }));
      const got = await dynamodb.send(new GetItemCommand({ TableName: table, Key: key('a'), ConsistentRead: true }));
      expect(got.Item?.v).toEqual({ N: '1' });
    });

    it('rejects a put whose condition fails, as AWS does', async () => {
      const put = () =>
        dynamodb.send(
          new PutItemCommand({
            TableName: table,
            Item: { ...key('once'), v: { N: '1' } },
            ConditionExpression: 'attribute_not_exists(#pk)',
            ExpressionAttributeNames: { '#pk': STATE_TABLE_PARTITION_KEY },
          }),
        );
      await put();
      await expect(put()).rejects.toBeInstanceOf(ConditionalCheckFailedException);
    });

    it('cancels a transaction with the failed condition named, as AWS does', async () => {
      await dynamodb.send(new PutItemCommand({ TableName: table, Item: { ...key('guard'), batchId: { N: '5' } } }));
      const write = dynamodb.send(
        new TransactWriteItemsCommand({
          TransactItems: [
            { Put: { TableName: table, Item: { ...key('effect'), v: { S: 'x' } } } },
            {
              Update: {
                TableName: table,
                Key: key('guard'),
                UpdateExpression: 'SET batchId = :n',
                ConditionExpression: 'batchId < :n',
                ExpressionAttributeValues: { ':n': { N: '5' } },
              },
            },
          ],
        }),
      );
      const err = await write.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(TransactionCanceledException);
      expect((err as TransactionCanceledException).CancellationReasons?.map((r) => r.Code)).toEqual(['None', 'ConditionalCheckFailed']);
      const effect = await dynamodb.send(new GetItemCommand({ TableName: table, Key: key('effect'), ConsistentRead: true }));
      expect(effect.Item).toBeUndefined();
    });

    it('refuses a table of the same name with another key schema', async () => {
      // The state table helper checks the schema instead of silently using a foreign table.
      const other = uniqueName('local-stack-foreign');
      await dynamodb.send(
        new CreateTableCommand({
          TableName: other,
          AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
      await expect(ensureStateTable(dynamodb, other)).rejects.toThrow(/key schema \(id, -\)/);
    });
  });

  describe('when a test puts a record on a Kinesis stream', () => {
    it('gets the record back from its shard', async () => {
      const stream = uniqueName('local-stack');
      await ensureStream(kinesis, stream, 2);
      await ensureStream(kinesis, stream, 2); // idempotent
      const shards = await kinesis.send(new ListShardsCommand({ StreamName: stream }));
      expect(shards.Shards).toHaveLength(2);
      const put = await kinesis.send(new PutRecordCommand({ StreamName: stream, PartitionKey: 'k', Data: Buffer.from('hello') }));
      const { ShardIterator } = await kinesis.send(
        new GetShardIteratorCommand({ StreamName: stream, ShardId: put.ShardId!, ShardIteratorType: 'TRIM_HORIZON' }),
      );
      const got = await kinesis.send(new GetRecordsCommand({ ShardIterator: ShardIterator! }));
      expect(got.Records?.map((r) => Buffer.from(r.Data!).toString())).toEqual(['hello']);
      expect(got.Records?.[0].SequenceNumber).toBe(put.SequenceNumber);
    });
  });

  describe('when a stack is stopped', () => {
    it('leaves no emulator process alive and stops answering', async () => {
      const stack = await startLocalStack({ services: ['dynamodb'] });
      const pid = stack.pids.dynamodb!;
      expect(stack.services).toEqual(['dynamodb']);
      expect(stack.connection.endpoints?.s3).toBeUndefined();
      expect(isAlive(pid)).toBe(true);
      const clients = createClients(stack.connection);
      try {
        await ensureStateTable(clients.dynamodb, 'stop-test');
      } finally {
        clients.destroy();
        await stack.stop();
      }
      expect(isAlive(pid)).toBe(false);
      const probe = new DynamoDBClient({
        region: stack.connection.region,
        endpoint: stack.connection.endpoints!.dynamodb,
        credentials: { ...stack.connection.credentials! },
        maxAttempts: 1,
      });
      try {
        await expect(probe.send(new ListTablesCommand({}))).rejects.toThrow(/ECONNREFUSED/);
      } finally {
        probe.destroy();
      }
      await stack.stop(); // idempotent
    });
  });

  describe('when SQS is asked for (notification mode)', () => {
    it('starts it in this process, answers on its endpoint, and stops it; by default it does not start', async () => {
      const stack = await startLocalStack({ services: ['sqs'] });
      expect(stack.services).toEqual(['sqs']);
      expect(stack.pids.sqs).toBeUndefined(); // in-process
      const clients = createClients(stack.connection);
      try {
        const { QueueUrl } = await clients.sqs.send(new CreateQueueCommand({ QueueName: 'stop-test' }));
        expect(QueueUrl).toMatch(/\/stop-test$/);
      } finally {
        clients.destroy();
        await stack.stop();
      }
      const probe = createClients(stack.connection);
      try {
        await expect(probe.sqs.send(new ListQueuesCommand({}))).rejects.toThrow(/ECONNREFUSED/);
      } finally {
        probe.destroy();
      }
      expect(ALL_LOCAL_SERVICES).not.toContain('sqs');
    });
  });

  describe('when AWS_ENDPOINT_URL is set (LocalStack)', () => {
    it('targets that endpoint for every service, path-style, with test credentials', () => {
      expect(connectionFromEnv({ AWS_ENDPOINT_URL: 'http://localhost:4566' })).toEqual({
        region: 'us-east-1',
        endpoints: { s3: 'http://localhost:4566', dynamodb: 'http://localhost:4566', kinesis: 'http://localhost:4566', sqs: 'http://localhost:4566' },
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
        s3ForcePathStyle: true,
      });
    });

    it('keeps the region, the credentials and per-service endpoints of the environment', () => {
      const conn = connectionFromEnv({
        AWS_ENDPOINT_URL: 'http://localhost:4566',
        AWS_ENDPOINT_URL_S3: 'http://localhost:9000',
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'AKID',
        AWS_SECRET_ACCESS_KEY: 'secret',
      });
      expect(conn?.region).toBe('eu-west-1');
      expect(conn?.endpoints).toEqual({
        s3: 'http://localhost:9000',
        dynamodb: 'http://localhost:4566',
        kinesis: 'http://localhost:4566',
        sqs: 'http://localhost:4566',
      });
      expect(conn?.credentials).toEqual({ accessKeyId: 'AKID', secretAccessKey: 'secret' });
    });

    it('returns null without an endpoint (real AWS, or the embedded stack)', () => {
      expect(connectionFromEnv({ AWS_REGION: 'eu-west-1' })).toBeNull();
    });
  });
});

describe('uniqueName', () => {
  describe('when given any prefix', () => {
    it('returns distinct names valid for S3 buckets, tables and streams', () => {
      const names = ['local-stack', 'Sluice_Ckpt.Test', '--x--', 'a'.repeat(100), ''].map(uniqueName);
      for (const n of names) expect(n).toMatch(/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/);
      expect(new Set([...names, ...names.map(uniqueName)]).size).toBe(names.length * 2);
    });
  });
});
