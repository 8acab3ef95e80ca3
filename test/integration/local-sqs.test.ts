/**
 * The local stack's SQS (local-aws-sqs, lib/local/sqs.ts) answers as SQS does where notification
 * mode relies on it: the limits a client must respect, visibility timeouts, receipt handles,
 * the counts, SentTimestamp, and redrive to a dead-letter queue.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { createTestQueue, queueCounts } from '../helpers/s3-notifications';
import { testClients } from '../helpers/stack';

const { sqs } = testClients() as { sqs: SQSClient };
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

async function receive(queueUrl: string, extra: { VisibilityTimeout?: number; MaxNumberOfMessages?: number } = {}): Promise<Message[]> {
  const res = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: 0,
      MessageSystemAttributeNames: ['SentTimestamp', 'ApproximateReceiveCount'],
      ...extra,
    }),
  );
  return res.Messages ?? [];
}

describe("the local stack's SQS", () => {
  it('refuses more than 10 messages per receive and more than 10 entries per batch', async () => {
    const { queueUrl } = await createTestQueue(sqs);
    await expect(sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 11 }))).rejects.toThrow(/MaxNumberOfMessages/);
    const entries = Array.from({ length: 11 }, (_, i) => ({ Id: String(i), ReceiptHandle: 'x' }));
    await expect(sqs.send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }))).rejects.toMatchObject({
      name: 'TooManyEntriesInBatchRequest',
    });
  });

  it("refuses a message larger than the queue's MaximumMessageSize (256 KiB when set so)", async () => {
    const { queueUrl } = await createTestQueue(sqs);
    await sqs.send(new SetQueueAttributesCommand({ QueueUrl: queueUrl, Attributes: { MaximumMessageSize: '262144' } }));
    await expect(sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x'.repeat(262_145) }))).rejects.toThrow(/shorter than 262144 bytes/);
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x'.repeat(262_144) }));
  });

  it('hides a received message for its visibility timeout, then delivers it again with a new handle and a higher receive count', async () => {
    const { queueUrl } = await createTestQueue(sqs);
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'm' }));
    const before = Date.now();
    const [first] = await receive(queueUrl, { VisibilityTimeout: 1 });
    expect(Number(first.Attributes?.SentTimestamp)).toBeLessThanOrEqual(before);
    expect(first.Attributes?.ApproximateReceiveCount).toBe('1');
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 1 });
    expect(await receive(queueUrl)).toEqual([]);
    await sleep(1_200);
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 1, inFlight: 0 });
    const [again] = await receive(queueUrl, { VisibilityTimeout: 30 });
    expect(again.MessageId).toBe(first.MessageId);
    expect(again.ReceiptHandle).not.toBe(first.ReceiptHandle);
    expect(again.Attributes?.ApproximateReceiveCount).toBe('2');
    await sqs.send(
      new ChangeMessageVisibilityBatchCommand({ QueueUrl: queueUrl, Entries: [{ Id: '0', ReceiptHandle: again.ReceiptHandle, VisibilityTimeout: 0 }] }),
    );
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 1, inFlight: 0 });
  });

  // The wrapper of lib/local/sqs-delivery.ts, which only the embedded stack has (not LocalStack).
  (process.env.AWS_ENDPOINT_URL ? it.skip : it)(
    'delivers a queue at least once and out of order unless it is tagged in-order (the embedded stack, as its tests start it)',
    async () => {
      /** Every delivery of 30 messages sent in order, received without deleting until nothing comes. */
      const deliveries = async (delivery: 'in-order' | 'at-least-once') => {
        const { queueUrl } = await createTestQueue(sqs, { delivery });
        for (let i = 0; i < 30; i += 10) {
          await sqs.send(
            new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: Array.from({ length: 10 }, (_, k) => ({ Id: String(k), MessageBody: String(i + k) })) }),
          );
        }
        const got: Message[][] = [];
        for (let empty = 0; empty < 2; ) {
          const batch = await receive(queueUrl, { VisibilityTimeout: 30 });
          if (batch.length === 0) empty++;
          else got.push(batch);
        }
        return got;
      };
      const bodies = (got: Message[][]) => got.flat().map((m) => Number(m.Body));
      const inOrder = await deliveries('in-order');
      expect(bodies(inOrder)).toEqual(Array.from({ length: 30 }, (_, i) => i));

      const atLeastOnce = await deliveries('at-least-once');
      const all = atLeastOnce.flat();
      expect([...new Set(bodies(atLeastOnce))].sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i));
      // some come twice (or more): the same message id, a new receipt handle, a higher receive count
      const byId = new Map<string, Message[]>();
      for (const m of all) byId.set(m.MessageId!, [...(byId.get(m.MessageId!) ?? []), m]);
      const again = [...byId.values()].filter((copies) => copies.length > 1);
      expect(again.length).toBeGreaterThan(0);
      for (const copies of again) {
        expect(new Set(copies.map((m) => m.ReceiptHandle)).size).toBe(copies.length);
        const counts = copies.map((m) => Number(m.Attributes?.ApproximateReceiveCount));
        expect(counts).toEqual([...counts].sort((a, b) => a - b));
        expect(new Set(counts).size).toBe(counts.length);
      }
      // and a receive's messages are not in send order
      const ordered = (batch: Message[]) => batch.every((m, i) => i === 0 || Number(m.Body) > Number(batch[i - 1].Body));
      expect(atLeastOnce.every(ordered)).toBe(false);
    },
  );

  it('refuses, per entry, a receipt handle it never issued', async () => {
    const { queueUrl } = await createTestQueue(sqs);
    const res = await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: [{ Id: 'a', ReceiptHandle: 'not-a-handle' }] }));
    expect(res.Failed).toEqual([expect.objectContaining({ Id: 'a', SenderFault: true, Code: 'ReceiptHandleIsInvalid' })]);
  });
});
