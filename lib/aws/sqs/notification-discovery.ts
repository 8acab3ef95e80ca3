/**
 * Notification mode's discovery: the files S3 announced to an SQS queue (S3 event notifications,
 * ObjectCreated for the landing prefix), instead of a LIST of the prefix.
 *
 *   discover()        GetQueueAttributes (ApproximateNumberOfMessages = N, noted once: availableNow)
 *                     ─▶ ReceiveMessage, 10 at a time, until N are received, the queue answers
 *                        empty or maxMessages are held; each received message stays invisible for
 *                        the run (visibilityTimeoutSeconds, or the queue's own)
 *                     ─▶ per message:
 *                          ObjectCreated under bucket/prefix   held; its file is a candidate
 *                          sent after discover() began          made visible again at once, not
 *                                                               taken (the next run's)
 *                          s3:TestEvent, ObjectRemoved/other,
 *                          another bucket, a key outside the
 *                          prefix, a folder marker              logged and deleted at once
 *                          malformed                            logged and left alone: the queue's
 *                                                               redrive moves it to the DLQ after
 *                                                               maxReceiveCount receives
 *                     ─▶ candidates {key, size, etag, lastModified}, one per key and ETag
 *   committed(keys)   the batch that read these files committed: delete the messages that named
 *                     them (DeleteMessageBatch, 10 at a time; what fails is retried, then logged)
 *   forget(keys)      the source will not read these (seen before, gone (404), filtered out):
 *                     delete their messages the same way
 *   release()         make every message still held visible again (the run ends with files it
 *                     did not get to): the next run receives them without waiting out the
 *                     visibility timeout
 *
 * A message is deleted once every file it names is committed or forgotten; never before. A
 * failure to delete never fails the run: the message comes back after its visibility timeout and
 * the source, which remembers the files it read, drops it as a duplicate (and forgets it).
 *
 * SQS is at-least-once and unordered: the same notification can arrive twice, in one run or two,
 * and S3 itself may send one event twice. Candidates are deduplicated by key and ETag within a
 * run; across runs the source's memory of seen files is what makes a duplicate read nothing.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { InvalidOptionError } from '../../engine/errors';
import { isRetriable, toSluiceError } from '../request/errors';
import { RetryableResult, type RetryOptions, retryPolicy, type RetryPolicy, withRetry } from '../request/retry';
import { checkBucket, keyRoot } from '../s3/requests';
import { parseS3Notification, type S3EventRecord } from './s3-events';

/** A file the queue announced: what the landing source needs to plan it. */
export interface NotifiedFile {
  readonly key: string;
  readonly size: number;
  /** Without quotes; '' when the event carried none. */
  readonly etag: string;
  /** The event time (S3's eventTime), epoch ms. */
  readonly lastModified: number;
}

export interface SqsNotificationDiscoveryOptions extends RetryOptions {
  readonly client: SQSClient;
  readonly queueUrl: string;
  /** The landing bucket: events of other buckets are logged and deleted. */
  readonly bucket: string;
  /** The landing prefix ('' for the whole bucket): events for keys outside it are logged and deleted. */
  readonly prefix: string;
  /**
   * How long a received message stays invisible, seconds (0 to 43200). It must outlast the run,
   * or a message comes back mid-run and a later run finds it again (harmless, the source drops
   * the duplicate, but it counts towards the DLQ's maxReceiveCount). @default the queue's own
   * VisibilityTimeout (the construct sets it above the Lambda timeout)
   */
  readonly visibilityTimeoutSeconds?: number;
  /**
   * The most messages one discover() holds. Every message a run receives and does not commit is
   * received again by the next run, and each receive counts towards the DLQ's maxReceiveCount:
   * keep this near what one run can read, so a large backlog is taken over several runs instead
   * of received by each. @default 10000
   */
  readonly maxMessages?: number;
  /**
   * ReceiveMessage's WaitTimeSeconds (0 to 20). 1 or more is long polling, which asks every SQS
   * server: short polling (0) samples some of them and can answer empty while messages wait.
   * @default 1
   */
  readonly waitTimeSeconds?: number;
  /** Structured events: messages dropped, malformed, taken after the start, deletes that failed. @default none */
  readonly log?: (event: Record<string, unknown>) => void;
  /** The clock that says when discover() began (epoch ms), against the messages' SentTimestamp. @default Date.now */
  readonly now?: () => number;
}

/** The requests sent so far (each attempt counts). */
export interface SqsRequestStats {
  getQueueAttributes: number;
  receiveMessage: number;
  deleteMessageBatch: number;
  changeMessageVisibilityBatch: number;
}

/** A received message the run holds. */
interface HeldMessage {
  readonly id: string;
  receiptHandle: string;
  /** The files it names that are neither committed nor forgotten yet. */
  readonly pending: Set<string>;
}

const DEFAULT_MAX_MESSAGES = 10_000;
/** SQS's most messages per ReceiveMessage and entries per batch request. */
const SQS_BATCH = 10;
const WHO = 'SqsNotificationDiscovery';

export class SqsNotificationDiscovery {
  readonly description: string;
  private readonly client: SQSClient;
  private readonly queueUrl: string;
  private readonly bucket: string;
  private readonly root: string;
  private readonly visibilityTimeoutSeconds?: number;
  private readonly maxMessages: number;
  private readonly waitTimeSeconds: number;
  private readonly policy: RetryPolicy;
  private readonly log: (event: Record<string, unknown>) => void;
  private readonly now: () => number;
  /** Held messages by message id. */
  private held = new Map<string, HeldMessage>();
  /** Held message ids by the key they name. */
  private byKey = new Map<string, Set<string>>();
  private readonly counts: SqsRequestStats = { getQueueAttributes: 0, receiveMessage: 0, deleteMessageBatch: 0, changeMessageVisibilityBatch: 0 };

  constructor(opts: SqsNotificationDiscoveryOptions) {
    if (!opts.client) throw new InvalidOptionError(`${WHO} needs an SQS client: pass createClients(connection).sqs or new SQSClient({...})`);
    if (typeof opts.queueUrl !== 'string' || !/^https?:\/\/\S+$/.test(opts.queueUrl)) {
      throw new InvalidOptionError(
        `${WHO} queueUrl ${JSON.stringify(opts.queueUrl)} is not a queue URL: pass the queue's URL (https://sqs.<region>.amazonaws.com/<account>/<name>), not its name or ARN`,
      );
    }
    this.client = opts.client;
    this.queueUrl = opts.queueUrl;
    this.bucket = checkBucket(opts.bucket, WHO);
    this.root = keyRoot(opts.prefix);
    this.visibilityTimeoutSeconds =
      opts.visibilityTimeoutSeconds === undefined ? undefined : integerIn('visibilityTimeoutSeconds', opts.visibilityTimeoutSeconds, 0, 43_200);
    this.maxMessages = integerIn('maxMessages', opts.maxMessages ?? DEFAULT_MAX_MESSAGES, 1, 1_000_000);
    this.waitTimeSeconds = integerIn('waitTimeSeconds', opts.waitTimeSeconds ?? 1, 0, 20);
    this.policy = retryPolicy(opts, WHO);
    this.log = opts.log ?? (() => undefined);
    this.now = opts.now ?? Date.now;
    this.description = `${opts.queueUrl} (notifications for s3://${this.bucket}/${this.root})`;
  }

  /**
   * The files announced by the messages in the queue when this call began (availableNow),
   * one per key and ETag, ordered by event time then key. Messages still held from an earlier
   * call are released first.
   */
  async discover(): Promise<NotifiedFile[]> {
    await this.release();
    const startedAt = this.now();
    const target = await this.approximateCount();
    const files = new Map<string, NotifiedFile>();
    /** Messages naming no file of this source: deleted together, 10 per request, once the drain ends. */
    const dropped: Array<{ MessageId: string; ReceiptHandle: string }> = [];
    // Messages received in this drain, by id: a copy delivered again (SQS delivers at least once)
    // does not count towards the messages there were at the start, or the drain would end early.
    const receivedIds = new Set<string>();
    const late: Message[] = [];
    while (receivedIds.size < target && this.held.size < this.maxMessages) {
      const want = Math.min(SQS_BATCH, this.maxMessages - this.held.size);
      const messages = await this.receive(want);
      if (messages.length === 0) break;
      for (const m of messages) receivedIds.add(m.MessageId!);
      for (const m of messages) {
        const sent = Number(m.Attributes?.SentTimestamp);
        if (Number.isFinite(sent) && sent > startedAt) late.push(m);
        else this.take(m, files, dropped);
      }
    }
    await this.deleteNow([...new Map(dropped.map((d) => [d.MessageId, d])).values()]);
    if (late.length > 0) {
      // Arrived after this run began: the next run's (availableNow). Visible again at once.
      this.log({
        event: 'notification-after-start',
        messages: late.length,
        message: `${late.length} notification(s) sent after the run began are left for the next run`,
      });
      await this.changeVisibility(
        late.filter((m) => !this.held.has(m.MessageId!)),
        0,
      );
    }
    return [...files.values()].sort((a, b) => a.lastModified - b.lastModified || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** The files of a committed batch: their messages are deleted (those naming only committed or forgotten files). */
  async committed(keys: Iterable<string>): Promise<void> {
    await this.settle(keys, 'committed');
  }

  /** Files the source will not read (seen before, deleted before it read them, filtered out): their messages are deleted. */
  async forget(keys: Iterable<string>): Promise<void> {
    await this.settle(keys, 'forgotten');
  }

  /** Makes every message still held visible again and lets go of it (ChangeMessageVisibility 0). */
  async release(): Promise<void> {
    const handles = [...this.held.values()];
    this.held = new Map();
    this.byKey = new Map();
    if (handles.length > 0)
      await this.changeVisibility(
        handles.map((h) => ({ MessageId: h.id, ReceiptHandle: h.receiptHandle })),
        0,
      );
  }

  /** Keys of the files whose messages are held (neither committed nor forgotten). */
  heldKeys(): string[] {
    return [...this.byKey.keys()];
  }

  stats(): SqsRequestStats {
    return { ...this.counts };
  }

  // ---- receiving -------------------------------------------------------------------------------

  private async approximateCount(): Promise<number> {
    const res = await this.send('GetQueueAttributes', () => {
      this.counts.getQueueAttributes++;
      return this.client.send(new GetQueueAttributesCommand({ QueueUrl: this.queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }));
    });
    const n = Number(res.Attributes?.ApproximateNumberOfMessages ?? 0);
    return Number.isFinite(n) && n > 0 ? n : 0;
  }

  private async receive(max: number): Promise<Message[]> {
    const res = await this.send('ReceiveMessage', () => {
      this.counts.receiveMessage++;
      return this.client.send(
        new ReceiveMessageCommand({
          QueueUrl: this.queueUrl,
          MaxNumberOfMessages: max,
          WaitTimeSeconds: this.waitTimeSeconds,
          MessageSystemAttributeNames: ['SentTimestamp', 'ApproximateReceiveCount'],
          ...(this.visibilityTimeoutSeconds === undefined ? {} : { VisibilityTimeout: this.visibilityTimeoutSeconds }),
        }),
      );
    });
    // One delivery per message id (an emulator may repeat one in a response): the last handle wins.
    const byId = new Map<string, Message>();
    for (const m of res.Messages ?? []) if (m.MessageId && m.ReceiptHandle) byId.set(m.MessageId, m);
    return [...byId.values()];
  }

  /** Sorts one received message: held with its files, deleted at once, or left for the DLQ. */
  private take(m: Message, files: Map<string, NotifiedFile>, dropped: Array<{ MessageId: string; ReceiptHandle: string }>): void {
    const id = m.MessageId!;
    const already = this.held.get(id);
    if (already) {
      // Received again within the run (its visibility expired): only the newest handle deletes it.
      already.receiptHandle = m.ReceiptHandle!;
      return;
    }
    const parsed = parseS3Notification(m.Body);
    const receiveCount = Number(m.Attributes?.ApproximateReceiveCount) || undefined;
    if (parsed.kind === 'malformed') {
      this.log({
        event: 'notification-malformed',
        messageId: id,
        receiveCount,
        reason: parsed.reason,
        message: `SQS message ${id} is not an S3 event notification (${parsed.reason}): left in the queue, so its redrive policy moves it to the dead-letter queue after maxReceiveCount receives`,
      });
      return;
    }
    if (parsed.kind === 'test') {
      this.log({ event: 'notification-test-event', messageId: id, bucket: parsed.bucket, message: `SQS message ${id} is S3's test event: deleted` });
      dropped.push({ MessageId: id, ReceiptHandle: m.ReceiptHandle! });
      return;
    }
    const pending = new Set<string>();
    for (const r of parsed.records) {
      const why = this.whyNotTaken(r);
      if (why) {
        this.log({
          event: 'notification-dropped',
          messageId: id,
          bucket: r.bucket,
          key: r.key,
          eventName: r.eventName,
          reason: why,
          message: `SQS message ${id} (${r.eventName} s3://${r.bucket}/${r.key}) names no file to read: ${why}`,
        });
        continue;
      }
      const c = r as Extract<S3EventRecord, { kind: 'created' }>;
      pending.add(c.key);
      const fileId = `${c.key}\u0000${c.etag}`;
      if (!files.has(fileId)) files.set(fileId, { key: c.key, size: c.size, etag: c.etag, lastModified: c.lastModified });
    }
    if (pending.size === 0) {
      dropped.push({ MessageId: id, ReceiptHandle: m.ReceiptHandle! });
      return;
    }
    this.held.set(id, { id, receiptHandle: m.ReceiptHandle!, pending });
    for (const key of pending) {
      let ids = this.byKey.get(key);
      if (!ids) this.byKey.set(key, (ids = new Set()));
      ids.add(id);
    }
  }

  /** Why a record names no file of this source, or undefined when it does. */
  private whyNotTaken(r: S3EventRecord): string | undefined {
    if (r.kind === 'ignored') return `a ${r.eventName} event, not ObjectCreated`;
    if (r.bucket !== this.bucket) return `another bucket than s3://${this.bucket}`;
    if (!r.key.startsWith(this.root)) return `outside the prefix s3://${this.bucket}/${this.root}`;
    if (r.key.endsWith('/')) return 'a folder marker, not a file';
    return undefined;
  }

  // ---- deleting --------------------------------------------------------------------------------

  private async settle(keys: Iterable<string>, how: 'committed' | 'forgotten'): Promise<void> {
    const done: HeldMessage[] = [];
    for (const key of keys) {
      const ids = this.byKey.get(key);
      if (!ids) continue;
      this.byKey.delete(key);
      for (const id of ids) {
        const h = this.held.get(id);
        if (!h) continue;
        h.pending.delete(key);
        if (h.pending.size === 0) {
          this.held.delete(id);
          done.push(h);
        }
      }
    }
    if (done.length === 0) return;
    if (how === 'forgotten')
      this.log({
        event: 'notification-forgotten',
        messages: done.length,
        message: `${done.length} notification(s) for files the source will not read: deleted`,
      });
    await this.deleteNow(done.map((h) => ({ MessageId: h.id, ReceiptHandle: h.receiptHandle })));
  }

  /**
   * DeleteMessageBatch, 10 at a time; failed entries that SQS marks retriable (not the sender's
   * fault) are sent again with the batch's backoff. What still fails is logged, never thrown: the
   * message comes back after its visibility timeout and the source drops it as a duplicate.
   */
  private async deleteNow(entries: Array<{ MessageId: string; ReceiptHandle: string }>): Promise<void> {
    await this.batched('delete', entries, (chunk) =>
      this.client.send(
        new DeleteMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: chunk.map((e, i) => ({ Id: String(i), ReceiptHandle: e.ReceiptHandle })) }),
      ),
    );
  }

  private async changeVisibility(entries: Array<{ MessageId?: string; ReceiptHandle?: string }>, seconds: number): Promise<void> {
    const valid = entries.filter((e): e is { MessageId: string; ReceiptHandle: string } => !!e.MessageId && !!e.ReceiptHandle);
    await this.batched('release', valid, (chunk) =>
      this.client.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: this.queueUrl,
          Entries: chunk.map((e, i) => ({ Id: String(i), ReceiptHandle: e.ReceiptHandle, VisibilityTimeout: seconds })),
        }),
      ),
    );
  }

  private async batched(
    what: 'delete' | 'release',
    entries: ReadonlyArray<{ MessageId: string; ReceiptHandle: string }>,
    send: (
      chunk: ReadonlyArray<{ MessageId: string; ReceiptHandle: string }>,
    ) => Promise<{ Failed?: Array<{ Id?: string; Code?: string; SenderFault?: boolean; Message?: string }> }>,
  ): Promise<void> {
    for (let i = 0; i < entries.length; i += SQS_BATCH) {
      let chunk = entries.slice(i, i + SQS_BATCH);
      const gaveUp: Array<{ messageId: string; code: string; reason: string }> = [];
      try {
        await withRetry(
          this.policy,
          (e) => isRetriable('sqs', e),
          async () => {
            if (what === 'delete') this.counts.deleteMessageBatch++;
            else this.counts.changeMessageVisibilityBatch++;
            const res = await send(chunk);
            const failed = (res.Failed ?? []).map((f) => ({ entry: chunk[Number(f.Id)], f })).filter((x) => x.entry !== undefined);
            for (const { entry, f } of failed)
              if (f.SenderFault) gaveUp.push({ messageId: entry.MessageId, code: f.Code ?? 'SenderFault', reason: f.Message ?? '' });
            const again = failed.filter(({ f }) => !f.SenderFault).map(({ entry }) => entry);
            if (again.length > 0) {
              chunk = again;
              throw new RetryableResult(`${again.length} entries failed on the service's side`, again);
            }
          },
        );
      } catch (e) {
        for (const entry of chunk)
          gaveUp.push({ messageId: entry.MessageId, code: (e as { name?: string }).name ?? 'Error', reason: (e as Error).message ?? String(e) });
      }
      if (gaveUp.length > 0) {
        this.log({
          event: what === 'delete' ? 'notification-delete-failed' : 'notification-release-failed',
          failures: gaveUp,
          message:
            what === 'delete'
              ? `${gaveUp.length} notification(s) could not be deleted (${gaveUp[0].code}): they come back after their visibility timeout, and the source drops files it has read`
              : `${gaveUp.length} notification(s) could not be made visible again (${gaveUp[0].code}): they come back after their visibility timeout`,
        });
      }
    }
  }

  private async send<T>(what: string, call: () => Promise<T>): Promise<T> {
    return withRetry(this.policy, (e) => isRetriable('sqs', e), call, {
      fail: ({ error, attempts }) =>
        toSluiceError(
          error,
          'sqs',
          `${what} on ${this.queueUrl}`,
          'check that the queue exists and the role may sqs:ReceiveMessage, sqs:DeleteMessage, sqs:ChangeMessageVisibility and sqs:GetQueueAttributes on it; a throttled or failed request is retried by the next run',
          attempts,
        ),
    });
  }
}

function integerIn(name: string, v: number, min: number, max: number): number {
  if (!Number.isSafeInteger(v) || v < min || v > max)
    throw new InvalidOptionError(`${WHO} ${name} (${v}) must be an integer from ${min} to ${max}: leave it out for the default`);
  return v;
}
