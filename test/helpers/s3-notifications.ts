/**
 * S3 event notifications as S3 writes them to an SQS queue, and the queue helpers the
 * notification tests share.
 */
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { IN_ORDER_TAG } from '../../lib/local/sqs-delivery';
import { uniqueName } from './stack';

export interface ObjectEvent {
  readonly bucket: string;
  readonly key: string;
  readonly size?: number;
  readonly etag?: string;
  /** ISO time; default 2026-12-01T10:00:00.000Z. */
  readonly eventTime?: string;
  /** Default ObjectCreated:Put. */
  readonly eventName?: string;
}

/** A key as S3 puts it in a notification: URL-encoded, '+' for a space, '/' kept. */
function encodeEventKey(key: string): string {
  return encodeURIComponent(key).replace(/%20/g, '+').replace(/%2F/g, '/');
}

/** One record of an S3 event notification (the shape of notification-content-structure). */
function s3Record(e: ObjectEvent) {
  const removed = (e.eventName ?? '').startsWith('ObjectRemoved');
  return {
    eventVersion: '2.1',
    eventSource: 'aws:s3',
    awsRegion: 'us-east-1',
    eventTime: e.eventTime ?? '2026-12-01T10:00:00.000Z',
    eventName: e.eventName ?? 'ObjectCreated:Put',
    userIdentity: { principalId: 'AWS:AIDAEXAMPLE' },
    requestParameters: { sourceIPAddress: '203.0.113.1' },
    responseElements: { 'x-amz-request-id': 'C3D13FE58DE4C810', 'x-amz-id-2': 'FMyUVURIY8/IgAtTv8xRjskZQpcIZ9KG4V5Wp6S7S/JRWeUWerMUE5JgHvANOjpD' },
    s3: {
      s3SchemaVersion: '1.0',
      configurationId: 'SluiceLanding',
      bucket: { name: e.bucket, ownerIdentity: { principalId: 'A3NL1KOZZKExample' }, arn: `arn:aws:s3:::${e.bucket}` },
      object: {
        key: encodeEventKey(e.key),
        ...(removed ? {} : { size: e.size ?? 100, eTag: e.etag ?? 'd41d8cd98f00b204e9800998ecf8427e' }),
        sequencer: '0055AED6DCD90281E5',
      },
    },
  };
}

/** The body S3 sends for one or more events. */
export function s3EventBody(...events: ObjectEvent[]): string {
  return JSON.stringify({ Records: events.map(s3Record) });
}

/** S3's test event, sent when a notification configuration is saved. */
export function s3TestEventBody(bucket: string): string {
  return JSON.stringify({
    Service: 'Amazon S3',
    Event: 's3:TestEvent',
    Time: '2026-12-01T10:00:00.000Z',
    Bucket: bucket,
    RequestId: '5582815E1AEA5ADF',
    HostId: '8cLeGAmw098X5cv4Zkwcmo8vvZa3eH3eKxsPzbB9wrR+YstdA6Knx4Ip8EXAMPLE',
  });
}

/**
 * A queue of its own for a test; `dlq` adds a dead-letter queue with that maxReceiveCount.
 * `delivery`: the local stack's SQS delivers a queue `at-least-once` (shuffled, a share twice:
 * lib/local/sqs-delivery.ts) or `in-order` (the emulator's own: send order, once per visibility
 * timeout), the default here: these tests pin exact queue counts, and send the duplicates and the
 * disorder they test themselves. (LocalStack and SQS ignore the tag that asks for it.)
 */
export async function createTestQueue(
  sqs: SQSClient,
  opts: { visibilityTimeoutSeconds?: number; dlqMaxReceiveCount?: number; delivery?: 'in-order' | 'at-least-once' } = {},
) {
  const name = uniqueName('notify');
  let dlqUrl: string | undefined;
  let redrive: Record<string, string> = {};
  if (opts.dlqMaxReceiveCount !== undefined) {
    dlqUrl = (await sqs.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }))).QueueUrl!;
    const arn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] }))).Attributes!.QueueArn!;
    redrive = { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn, maxReceiveCount: opts.dlqMaxReceiveCount }) };
  }
  const queueUrl = (
    await sqs.send(
      new CreateQueueCommand({
        QueueName: name,
        Attributes: { VisibilityTimeout: String(opts.visibilityTimeoutSeconds ?? 60), ...redrive },
        ...((opts.delivery ?? 'in-order') === 'in-order' ? { tags: { [IN_ORDER_TAG.key]: IN_ORDER_TAG.value } } : {}),
      }),
    )
  ).QueueUrl!;
  return { queueUrl, dlqUrl };
}

/**
 * Sends each body as a message, then waits until the queue's count shows them: a count lags the
 * send by moments (SQS's, and the emulator's, which counts a message only once a timer has run),
 * and a run that starts within that lag leaves the message for the next run (docs/sources.md).
 * These tests start their runs after the lag; nothing else may receive from the queue meanwhile.
 */
export async function sendBodies(sqs: SQSClient, queueUrl: string, bodies: readonly string[]): Promise<void> {
  const before = (await queueCounts(sqs, queueUrl)).visible;
  for (const body of bodies) await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
  await waitForMessages(sqs, queueUrl, before + bodies.length);
}

/** Waits (up to 5 s) until the queue's count shows at least `n` visible messages; an error says what it showed. */
export async function waitForMessages(sqs: SQSClient, queueUrl: string, n: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if ((await queueCounts(sqs, queueUrl)).visible >= n) return;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`the queue never held ${n} visible messages: ${JSON.stringify(await queueCounts(sqs, queueUrl))}`);
}

/** The queue's approximate counts: visible, and received but neither deleted nor visible again. */
export async function queueCounts(sqs: SQSClient, queueUrl: string): Promise<{ visible: number; inFlight: number }> {
  const a = (
    await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
    )
  ).Attributes!;
  return { visible: Number(a.ApproximateNumberOfMessages), inFlight: Number(a.ApproximateNumberOfMessagesNotVisible) };
}

/**
 * The bodies of the messages visible now (up to 10), received with a visibility timeout of 0 so
 * they stay visible (one per message id: a message visible again at once can be in the answer twice).
 */
export async function visibleBodies(sqs: SQSClient, queueUrl: string): Promise<string[]> {
  const res = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 0 }));
  return [...new Map((res.Messages ?? []).map((m) => [m.MessageId, m.Body!])).values()];
}
