/**
 * Notification mode's discovery against SQS: local-aws-sqs on the embedded local stack (or
 * LocalStack's SQS with AWS_ENDPOINT_URL). The emulator delivers in send order and a message once
 * per visibility timeout, kinder than a standard queue: these tests send notifications out of
 * order and twice themselves, as S3 may (createTestQueue tags their queues to keep that delivery).
 */
import { ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { SqsNotificationDiscovery, type SqsNotificationDiscoveryOptions } from '../../lib/aws/sqs/notification-discovery';
import { createTestQueue, queueCounts, s3EventBody, s3TestEventBody, sendBodies, visibleBodies } from '../helpers/s3-notifications';
import { testClients } from '../helpers/stack';

const { sqs } = testClients() as { sqs: SQSClient };
const BUCKET = 'landing-bucket';
const PREFIX = 'landing/orders';

function discovery(queueUrl: string, extra: Partial<SqsNotificationDiscoveryOptions> = {}) {
  const events: Array<Record<string, unknown>> = [];
  const d = new SqsNotificationDiscovery({ client: sqs, queueUrl, bucket: BUCKET, prefix: PREFIX, log: (e) => events.push(e), ...extra });
  return { d, events };
}

const created = (key: string, etag = 'e1', eventTime = '2026-12-01T10:00:00.000Z', size = 10) => s3EventBody({ bucket: BUCKET, key, etag, eventTime, size });

const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

describe('SqsNotificationDiscovery', () => {
  describe('when the queue holds notifications for new files', () => {
    it('returns each file with its size, ETag and event time, and holds its message until the batch committed', async () => {
      const { queueUrl } = await createTestQueue(sqs);
      await sendBodies(sqs, queueUrl, [
        created('landing/orders/b.json', 'eb', '2026-12-01T10:00:02.000Z', 20),
        created('landing/orders/a.json', 'ea', '2026-12-01T10:00:01.500Z', 7),
      ]);
      const { d } = discovery(queueUrl);
      const files = await d.discover();
      expect(files).toEqual([
        { key: 'landing/orders/a.json', size: 7, etag: 'ea', lastModified: Date.parse('2026-12-01T10:00:01.500Z') },
        { key: 'landing/orders/b.json', size: 20, etag: 'eb', lastModified: Date.parse('2026-12-01T10:00:02.000Z') },
      ]);
      // Received, not deleted: invisible for the run.
      expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 2 });
      await d.committed(['landing/orders/a.json']);
      expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 1 });
      await d.committed(['landing/orders/b.json']);
      expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0 });
    });
  });

  describe('when S3 announced the same file twice (a duplicate notification)', () => {
    it('returns one candidate and deletes both messages once it is committed', async () => {
      const { queueUrl } = await createTestQueue(sqs);
      await sendBodies(sqs, queueUrl, [created('landing/orders/a.json'), created('landing/orders/b.json'), created('landing/orders/a.json')]);
      const { d } = discovery(queueUrl);
      const files = await d.discover();
      expect(files.map((f) => f.key)).toEqual(['landing/orders/a.json', 'landing/orders/b.json']);
      await d.committed(['landing/orders/a.json']);
      expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 1 });
    });

    it('returns one candidate per ETag when the object was overwritten', async () => {
      const { queueUrl } = await createTestQueue(sqs);
      await sendBodies(sqs, queueUrl, [created('landing/orders/a.json', 'v1'), created('landing/orders/a.json', 'v2', '2026-12-01T10:00:05.000Z')]);
      const { d } = discovery(queueUrl);
      expect((await d.discover()).map((f) => f.etag)).toEqual(['v1', 'v2']);
    });
  });

  describe('when notifications arrive out of key order', () => {
    it('returns every file whatever the order, by event time then key', async () => {
      const { queueUrl } = await createTestQueue(sqs);
      const keys = ['landing/orders/customer=b/3.json', 'landing/orders/customer=a/9.json', 'landing/orders/2026/01/x.json', 'landing/orders/0.json'];
      await sendBodies(
        sqs,
        queueUrl,
        keys.map((k, i) => created(k, `e${i}`, `2026-12-01T10:00:0${3 - i}.000Z`)),
      );
      const { d } = discovery(queueUrl);
      expect((await d.discover()).map((f) => f.key)).toEqual([...keys].reverse());
    });
  });

  describe('when a message was received by a run that did not delete it (a crash before the commit)', () => {
    it('is received again by the next run once its visibility timeout expired', async () => {
      const { queueUrl } = await createTestQueue(sqs);
      await sendBodies(sqs, queueUrl, [created('landing/orders/a.json')]);
      // No long poll: the emulator's waits out WaitTimeSeconds, here longer than the visibility timeout.
      const crashed = discovery(queueUrl, { visibilityTimeoutSeconds: 2, waitTimeSeconds: 0 }).d;
      expect((await crashed.discover()).map((f) => f.key)).toEqual(['landing/orders/a.json']);
      // Within the timeout, a new run finds nothing: the message is the crashed run's.
      const early = discovery(queueUrl, { waitTimeSeconds: 0 }).d;
      expect(await early.discover()).toEqual([]);
      await sleep(2_200);
      const next = discovery(queueUrl, { visibilityTimeoutSeconds: 30 }).d;
      expect((await next.discover()).map((f) => f.key)).toEqual(['landing/orders/a.json']);
      await next.committed(['landing/orders/a.json']);
      expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0 });
      // The crashed run's handle is stale: deleting with it changes nothing, and fails no run.
      await crashed.committed(['landing/orders/a.json']);
    });
  });

  describe('when a notification is sent after the run began (availableNow)', () => {
    it('is not taken, and is visible again at once for the next run', async () => {
      const { queueUrl } = await createTestQueue(sqs);
      await sendBodies(sqs, queueUrl, [created('landing/orders/a.json')]);
      await sleep(20);
      const runStart = Date.now();
      await sleep(20);
      await sendBodies(sqs, queueUrl, [created('landing/orders/late.json')]);
      const { d, events } = discovery(queueUrl, { now: () => runStart });
      expect((await d.discover()).map((f) => f.key)).toEqual(['landing/orders/a.json']);
      expect(events.map((e) => e.event)).toEqual(['notification-after-start']);
      expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 1, inFlight: 1 });
      const next = discovery(queueUrl).d;
      expect((await next.discover()).map((f) => f.key)).toEqual(['landing/orders/late.json']);
    });
  });

  describe('when a notification names a key outside the prefix, another bucket, a removed object, or is a test event', () => {
    it('logs it and deletes it at once, without a candidate', async () => {
      const { queueUrl } = await createTestQueue(sqs);
      await sendBodies(sqs, queueUrl, [
        created('landing/orders-old/a.json'),
        created('landing/other/b.json'),
        s3EventBody({ bucket: 'another-bucket', key: 'landing/orders/c.json' }),
        s3EventBody({ bucket: BUCKET, key: 'landing/orders/d.json', eventName: 'ObjectRemoved:Delete' }),
        s3EventBody({ bucket: BUCKET, key: 'landing/orders/folder/', size: 0 }),
        s3TestEventBody(BUCKET),
        created('landing/orders/ok.json'),
      ]);
      const { d, events } = discovery(queueUrl);
      expect((await d.discover()).map((f) => f.key)).toEqual(['landing/orders/ok.json']);
      expect(events.filter((e) => e.event === 'notification-dropped').map((e) => [e.key, e.reason])).toEqual([
        ['landing/orders-old/a.json', 'outside the prefix s3://landing-bucket/landing/orders/'],
        ['landing/other/b.json', 'outside the prefix s3://landing-bucket/landing/orders/'],
        ['landing/orders/c.json', 'another bucket than s3://landing-bucket'],
        ['landing/orders/d.json', 'a ObjectRemoved:Delete event, not ObjectCreated'],
        ['landing/orders/folder/', 'a folder marker, not a file'],
      ]);
      expect(events.filter((e) => e.event === 'notification-test-event')).toHaveLength(1);
      // Only the held message is left, in flight; the six others went in one DeleteMessageBatch.
      expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 1 });
      expect(d.stats().deleteMessageBatch).toBe(1);
    });
  });

  describe('when a key has spaces, pluses and other characters S3 URL-encodes', () => {
    it('returns the key as stored', async () => {
      const { queueUrl } = await createTestQueue(sqs);
      const keys = ['landing/orders/a b+c=d.json', 'landing/orders/día 1/€%.json', 'landing/orders/x:y(1).json'];
      await sendBodies(
        sqs,
        queueUrl,
        keys.map((k) => created(k)),
      );
      const raw = JSON.parse(created(keys[0])).Records[0].s3.object.key;
      expect(raw).toBe('landing/orders/a+b%2Bc%3Dd.json');
      const { d } = discovery(queueUrl);
      expect((await d.discover()).map((f) => f.key).sort()).toEqual([...keys].sort());
    });
  });

  describe('when the queue holds more than 10 messages', () => {
    it('receives them 10 at a time until the count noted at the start is reached', async () => {
      const { queueUrl } = await createTestQueue(sqs);
      await sendBodies(
        sqs,
        queueUrl,
        Array.from({ length: 25 }, (_, i) => created(`landing/orders/${String(i).padStart(2, '0')}.json`)),
      );
      const { d } = discovery(queueUrl);
      expect(await d.discover()).toHaveLength(25);
      // 10 + 10 + 5, and no empty receive after the 25th (the count noted at the start was reached).
      expect(d.stats()).toEqual({ getQueueAttributes: 1, receiveMessage: 3, deleteMessageBatch: 0, changeMessageVisibilityBatch: 0 });
      await d.committed(Array.from({ length: 25 }, (_, i) => `landing/orders/${String(i).padStart(2, '0')}.json`));
      // 25 deletes in batches of at most 10.
      expect(d.stats().deleteMessageBatch).toBe(3);
      expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0 });
    });

    it('holds at most maxMessages, leaving the rest for the next run', async () => {
      const { queueUrl } = await createTestQueue(sqs);
      await sendBodies(
        sqs,
        queueUrl,
        Array.from({ length: 15 }, (_, i) => created(`landing/orders/${String(i).padStart(2, '0')}.json`)),
      );
      const { d } = discovery(queueUrl, { maxMessages: 12 });
      expect(await d.discover()).toHaveLength(12);
      expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 3, inFlight: 12 });
    });
  });

  describe('when the queue delivers some messages twice while a run drains it (at least once, as SQS may)', () => {
    it('still takes every message there was at the start: a copy delivered again does not count as one more', async () => {
      // The embedded stack's SQS delivers this queue shuffled and a share twice (lib/local/sqs-delivery.ts).
      const { queueUrl } = await createTestQueue(sqs, { delivery: 'at-least-once' });
      const keys = Array.from({ length: 25 }, (_, i) => `landing/orders/${String(i).padStart(2, '0')}.json`);
      await sendBodies(
        sqs,
        queueUrl,
        keys.map((k) => created(k)),
      );
      const { d } = discovery(queueUrl);
      expect((await d.discover()).map((f) => f.key)).toEqual(keys);
      await d.committed(keys);
      expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0 });
    });
  });

  describe('when the run ends with files it did not read', () => {
    it('release() makes their messages visible again; the committed ones stay deleted', async () => {
      const { queueUrl } = await createTestQueue(sqs);
      await sendBodies(sqs, queueUrl, [created('landing/orders/a.json'), created('landing/orders/b.json')]);
      const { d } = discovery(queueUrl);
      await d.discover();
      await d.committed(['landing/orders/a.json']);
      await d.release();
      expect(await visibleBodies(sqs, queueUrl)).toEqual([created('landing/orders/b.json')]);
    });
  });

  describe('when the source will not read a file (deleted before it read it, or seen before)', () => {
    it('forget() deletes its messages', async () => {
      const { queueUrl } = await createTestQueue(sqs);
      await sendBodies(sqs, queueUrl, [created('landing/orders/gone.json'), created('landing/orders/a.json')]);
      const { d, events } = discovery(queueUrl);
      await d.discover();
      await d.forget(['landing/orders/gone.json']);
      expect(events.map((e) => e.event)).toEqual(['notification-forgotten']);
      expect(d.heldKeys()).toEqual(['landing/orders/a.json']);
      expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 1 });
    });
  });

  describe('when one message names several files', () => {
    it('is deleted only once every file it names is committed', async () => {
      const { queueUrl } = await createTestQueue(sqs);
      await sendBodies(sqs, queueUrl, [s3EventBody({ bucket: BUCKET, key: 'landing/orders/a.json' }, { bucket: BUCKET, key: 'landing/orders/b.json' })]);
      const { d } = discovery(queueUrl);
      expect(await d.discover()).toHaveLength(2);
      await d.committed(['landing/orders/a.json']);
      expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 1 });
      await d.committed(['landing/orders/b.json']);
      expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0 });
    });
  });

  describe('when a message is not an S3 event notification', () => {
    it('is logged and left alone, so the redrive policy moves it to the dead-letter queue', async () => {
      const { queueUrl, dlqUrl } = await createTestQueue(sqs, { visibilityTimeoutSeconds: 1, dlqMaxReceiveCount: 2 });
      await sendBodies(sqs, queueUrl, ['not json', JSON.stringify({ hello: 'world' })]);
      for (let run = 0; run < 3; run++) {
        const { d, events } = discovery(queueUrl, { waitTimeSeconds: 0 });
        expect(await d.discover()).toEqual([]);
        if (run < 2) expect(events.map((e) => e.event)).toEqual(['notification-malformed', 'notification-malformed']);
        await sleep(1_200);
      }
      const dead = await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 10 }));
      expect((dead.Messages ?? []).map((m) => m.Body).sort()).toEqual(['not json', JSON.stringify({ hello: 'world' })].sort());
    });
  });

  describe('when the queue is empty', () => {
    it('asks for the count once and receives nothing', async () => {
      const { queueUrl } = await createTestQueue(sqs);
      const { d } = discovery(queueUrl);
      expect(await d.discover()).toEqual([]);
      expect(d.stats()).toEqual({ getQueueAttributes: 1, receiveMessage: 0, deleteMessageBatch: 0, changeMessageVisibilityBatch: 0 });
    });
  });

  describe('when the queue does not exist', () => {
    it('fails with the queue and the remedy', async () => {
      const { queueUrl } = await createTestQueue(sqs);
      const { d } = discovery(`${queueUrl}-missing`, { maxAttempts: 1 });
      await expect(d.discover()).rejects.toThrow(
        /GetQueueAttributes on .*-missing failed \(.*(QueueDoesNotExist|NonExistentQueue).*check that the queue exists/s,
      );
    });
  });
});
