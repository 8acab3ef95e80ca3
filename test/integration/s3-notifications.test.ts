/**
 * The local stack's S3 (s3rver) sends bucket notifications to its SQS as S3 does
 * (lib/local/s3-notifications.ts): PutBucketNotificationConfiguration, the test event, one
 * message per created object under the configured prefix, URL-encoded keys with the ETag, and
 * what SqsNotificationDiscovery makes of them.
 */
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetBucketNotificationConfigurationCommand,
  PutBucketNotificationConfigurationCommand,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { DeleteMessageCommand, GetQueueAttributesCommand, type Message, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { SqsNotificationDiscovery } from '../../lib/aws/sqs/notification-discovery';
import { ensureBucket, ensureNotificationQueue } from '../../lib/local/resources';
import { createTestQueue } from '../helpers/s3-notifications';
import { testClients, uniqueName } from '../helpers/stack';

const { s3, sqs } = testClients() as ReturnType<typeof testClients> & { sqs: SQSClient };
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

/** Receives until `n` messages came (delivery is asynchronous), deleting nothing. */
async function receiveN(queueUrl: string, n: number): Promise<Message[]> {
  const got = new Map<string, Message>();
  for (let i = 0; i < 50 && got.size < n; i++) {
    const res = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 30 }));
    for (const m of res.Messages ?? []) got.set(m.MessageId!, m);
    if (got.size < n) await sleep(50);
  }
  return [...got.values()];
}

describe("the local stack's S3 notifications", () => {
  it('sends the test event, then one ObjectCreated message per object under the prefix, with the key URL-encoded and the ETag', async () => {
    const bucket = uniqueName('notify');
    await ensureBucket(s3, bucket);
    const { queueUrl } = await createTestQueue(sqs);
    const arn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }))).Attributes!.QueueArn!;
    await s3.send(
      new PutBucketNotificationConfigurationCommand({
        Bucket: bucket,
        NotificationConfiguration: {
          QueueConfigurations: [
            { Id: 'landing', QueueArn: arn, Events: ['s3:ObjectCreated:*'], Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'landing/orders/' }] } } },
          ],
        },
      }),
    );
    const stored = await s3.send(new GetBucketNotificationConfigurationCommand({ Bucket: bucket }));
    expect(stored.QueueConfigurations).toEqual([expect.objectContaining({ Id: 'landing', QueueArn: arn, Events: ['s3:ObjectCreated:*'] })]);
    const [testEvent] = await receiveN(queueUrl, 1);
    expect(JSON.parse(testEvent.Body!)).toMatchObject({ Event: 's3:TestEvent', Bucket: bucket });

    const put = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'landing/orders/a b+c.json', Body: '{"x":1}\n' }));
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'landing/orders-old/skip.json', Body: '{}\n' }));
    await s3.send(new CopyObjectCommand({ Bucket: bucket, Key: 'landing/orders/copy.json', CopySource: `${bucket}/landing/orders/a b+c.json` }));
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'landing/orders/copy.json' }));
    const messages = await receiveN(queueUrl, 2);
    await sleep(200); // nothing else arrives: not the other prefix, not the delete
    expect(await receiveN(queueUrl, 1)).toEqual([]);
    const records = messages.map((m) => JSON.parse(m.Body!).Records[0]).sort((a, b) => (a.s3.object.key < b.s3.object.key ? -1 : 1));
    expect(records.map((r) => [r.eventName, r.s3.bucket.name, r.s3.object.key, r.s3.object.size, r.s3.object.eTag, r.s3.configurationId])).toEqual([
      ['ObjectCreated:Put', bucket, 'landing/orders/a+b%2Bc.json', 8, put.ETag!.replace(/"/g, ''), 'landing'],
      ['ObjectCreated:Copy', bucket, 'landing/orders/copy.json', 8, put.ETag!.replace(/"/g, ''), 'landing'],
    ]);
  });

  it('feeds SqsNotificationDiscovery the files as written (resources from ensureNotificationQueue, twice: idempotent)', async () => {
    const bucket = uniqueName('notify');
    await ensureBucket(s3, bucket);
    const name = uniqueName('landing');
    await ensureNotificationQueue({ s3, sqs }, { bucket, prefix: 'in', name });
    const { queueUrl, deadLetterQueueUrl } = await ensureNotificationQueue({ s3, sqs }, { bucket, prefix: '/in/', name });
    const attrs = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['All'] }))).Attributes!;
    expect(JSON.parse(attrs.RedrivePolicy!)).toMatchObject({ maxReceiveCount: 10 });
    expect(deadLetterQueueUrl).toMatch(new RegExp(`/${name}-dlq$`));
    // The configuration was saved twice: two test events, which the discovery deletes.
    const tests = await receiveN(queueUrl, 2);
    expect(tests.map((m) => JSON.parse(m.Body!).Event)).toEqual(['s3:TestEvent', 's3:TestEvent']);
    // Deleted, as a consumer does: a copy the queue delivers again (at least once) goes with them.
    for (const m of tests) await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle }));
    const keys = ['in/b/2.json', 'in/a/1.json', 'in/c d/3.json'];
    for (const key of keys) await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: `{"k":"${key}"}\n` }));
    // The messages are sent asynchronously: wait until the queue holds the three files'.
    for (let i = 0; i < 50; i++) {
      const n = Number(
        (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }))).Attributes!
          .ApproximateNumberOfMessages,
      );
      if (n >= 3) break;
      await sleep(50);
    }
    const events: Array<Record<string, unknown>> = [];
    const d = new SqsNotificationDiscovery({ client: sqs, queueUrl, bucket, prefix: 'in', log: (e) => events.push(e) });
    const files = await d.discover();
    expect(files.map((f) => f.key).sort()).toEqual([...keys].sort());
    expect(files.every((f) => f.size > 0 && /^[0-9a-f]{32}$/.test(f.etag))).toBe(true);
    expect(events).toEqual([]);
    await d.committed(keys);
    expect((await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['All'] }))).Attributes).toMatchObject({
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesNotVisible: '0',
    });
  });
});
