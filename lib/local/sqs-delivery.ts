/**
 * The local SQS delivering as a standard queue may, not as local-aws-sqs does (in send order, and
 * a message once per visibility timeout): when the stack is started with `sqsDelivery` (the
 * integration tests' setup does, with their SLUICE_TWIN_SEED), every ReceiveMessage answer has its
 * messages in a shuffled order, and a share of them is made visible again before the answer goes
 * out, so a later receive delivers them a second time (a new receipt handle, a higher
 * ApproximateReceiveCount) while the first copy is still being handled: at-least-once delivery.
 *
 *   receive 1 ──▶ [m3, m1, m2]   m1 picked: ChangeMessageVisibility(m1, 0) before the answer leaves
 *   receive 2 ──▶ [m1', m4]      m1 again, while the consumer of receive 1 may not have deleted it
 *
 * Either receipt handle deletes the message (local-aws-sqs reads the message id from it). The
 * emulator counts the visibility change as a receive too, so the second copy's
 * ApproximateReceiveCount is two higher; and a message is made visible again only while that
 * count stays below the queue's `maxReceiveCount`, else the emulator would move it to the
 * dead-letter queue at once, for a duplicate.
 * A queue tagged `sluice:local-delivery` = `in-order` keeps the emulator's own delivery: for the
 * tests of the emulator itself, and those that pin exact queue counts and make the duplicates and
 * the disorder they need themselves (SQS, and LocalStack, ignore the tag).
 * Loaded only when asked (lib/local/sqs.ts), with the seeded generator of the in-memory twins.
 */
import { ChangeMessageVisibilityCommand, GetQueueAttributesCommand, ListQueueTagsCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { InvalidOptionError } from '../engine/errors';
import { prng } from '../engine/testing/twins';

/** How the local SQS delivers when it is made to deliver as a standard queue may. */
export interface SqsDeliveryOptions {
  /** The seed of the shuffled orders and of which messages come twice (the tests pass SLUICE_TWIN_SEED). */
  readonly seed: number;
  /**
   * The share of the messages of a receive that a later receive delivers again.
   * @default 0.25
   */
  readonly redeliverShare?: number;
}

/** A message of a ReceiveMessage answer (JSON protocol), as far as it is read here. */
interface ReceivedMessage {
  readonly ReceiptHandle?: string;
  Attributes?: Record<string, string>;
}

const RECEIVE_COUNT = 'ApproximateReceiveCount';

/** The tag that keeps a queue's delivery in send order and once per visibility timeout. */
export const IN_ORDER_TAG = { key: 'sluice:local-delivery', value: 'in-order' } as const;

/** Shuffles and re-delivers the answers of one local SQS server (`client` reaches it). */
export class AtLeastOnceDelivery {
  private readonly random: () => number;
  private readonly share: number;

  constructor(
    opts: SqsDeliveryOptions,
    private readonly client: SQSClient,
  ) {
    const share = opts.redeliverShare ?? 0.25;
    if (!(share >= 0 && share <= 1)) {
      throw new InvalidOptionError(
        `startLocalStack sqsDelivery.redeliverShare (${share}) must be between 0 and 1 inclusive: it is the share of received messages delivered twice`,
      );
    }
    if (!Number.isInteger(opts.seed) || opts.seed < 0) {
      throw new InvalidOptionError(
        `startLocalStack sqsDelivery.seed (${opts.seed}) must be a non-negative integer: pass the seed a failing run printed (SLUICE_TWIN_SEED)`,
      );
    }
    this.share = share;
    this.random = prng(opts.seed);
  }

  /** The attribute names a ReceiveMessage is forwarded with: the caller's and the receive count, which picking needs. */
  attributeNames(asked: readonly string[]): string[] {
    return asked.includes('All') || asked.includes(RECEIVE_COUNT) ? [...asked] : [...asked, RECEIVE_COUNT];
  }

  /**
   * The answer of a ReceiveMessage of `queueUrl` (`asked`: the caller's attribute names): its
   * messages shuffled, and those picked to come again made visible before it is returned.
   */
  async deliver(queueUrl: string, asked: readonly string[], answer: unknown): Promise<unknown> {
    const messages = (answer as { Messages?: ReceivedMessage[] } | null)?.Messages;
    if (!Array.isArray(messages) || messages.length === 0) return answer;
    if (!(await this.inOrder(queueUrl))) await this.shuffleAndPick(queueUrl, messages);
    if (!asked.includes('All') && !asked.includes(RECEIVE_COUNT)) {
      for (const m of messages) {
        if (m.Attributes === undefined) continue;
        delete m.Attributes[RECEIVE_COUNT];
        if (Object.keys(m.Attributes).length === 0) delete m.Attributes;
      }
    }
    return answer;
  }

  close(): void {
    this.client.destroy();
  }

  /** Shuffles `messages` in place and makes those picked to come again visible. */
  private async shuffleAndPick(queueUrl: string, messages: ReceivedMessage[]): Promise<void> {
    // Fisher-Yates, from the seeded generator.
    for (let i = messages.length - 1; i > 0; i--) {
      const j = Math.floor(this.random() * (i + 1));
      [messages[i], messages[j]] = [messages[j], messages[i]];
    }
    const picked = messages.filter(() => this.random() < this.share);
    if (picked.length > 0) {
      const limit = await this.maxReceiveCount(queueUrl);
      // (+ 1: the emulator counts the visibility change as a receive.)
      const again = picked.filter((m) => m.ReceiptHandle !== undefined && Number(m.Attributes?.[RECEIVE_COUNT] ?? Number.POSITIVE_INFINITY) + 1 < limit);
      await Promise.all(
        again.map((m) =>
          this.client
            .send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0 }))
            // Deleted or gone since: nothing to deliver again.
            .catch(() => undefined),
        ),
      );
    }
  }

  /** Whether the queue is tagged to keep the emulator's own delivery. */
  private async inOrder(queueUrl: string): Promise<boolean> {
    const out = await this.client.send(new ListQueueTagsCommand({ QueueUrl: queueUrl })).catch(() => null);
    return out?.Tags?.[IN_ORDER_TAG.key] === IN_ORDER_TAG.value;
  }

  /** The queue's redrive maxReceiveCount (Infinity without a redrive policy). */
  private async maxReceiveCount(queueUrl: string): Promise<number> {
    const out = await this.client.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['RedrivePolicy'] })).catch(() => null);
    const policy = out?.Attributes?.RedrivePolicy;
    if (policy === undefined) return Number.POSITIVE_INFINITY;
    const max = Number((JSON.parse(policy) as { maxReceiveCount?: unknown }).maxReceiveCount);
    return Number.isFinite(max) ? max : Number.POSITIVE_INFINITY;
  }
}
