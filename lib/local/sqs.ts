/**
 * SQS in this process: local-aws-sqs (npm, MIT), an SQS server in plain Node (the JSON protocol
 * the AWS SDK v3 speaks, and the query protocol), on a port the OS picks. Started only when asked
 * (`services: [..., 'sqs']`): notification mode's tests need it, nothing else does.
 *
 * What it does as SQS does (checked in test/integration/local-sqs.test.ts): visibility timeouts
 * (a received message is invisible until it expires, then received again with a new receipt
 * handle and a higher ApproximateReceiveCount), ReceiveMessage's 1 to 10 messages, batch
 * requests of at most 10 entries with distinct ids, the queue's MaximumMessageSize (1 MiB by
 * default, as SQS since August 2025; 262,144 bytes when a queue sets it), a receipt handle it
 * never issued refused per entry (ReceiptHandleIsInvalid), redrive to a dead-letter queue after
 * maxReceiveCount receives, QueueDoesNotExist.
 *
 * Where it is kinder than SQS, and what the tests do about it:
 * - It delivers in the order messages were sent, and a message once per visibility timeout. A
 *   standard queue delivers in any order and, rarely, twice. Started with `sqsDelivery` (the
 *   integration tests' setup), each receive's messages come shuffled and a share of them twice
 *   (sqs-delivery.ts); the tests also send notifications out of order and twice themselves (as S3
 *   also does).
 * Where it answers otherwise, and is made to answer as SQS does (`answerAsSqs` below):
 * - Its ApproximateNumberOfMessages counts the messages in flight too; SQS's counts those
 *   available for retrieval. Left as is, a test of "deleted after the commit only" could not tell
 *   a held message from a visible one, and a drain's stop at the count noted at its start would
 *   go untested. GetQueueAttributes answers here with the visible messages only.
 * - ReceiveMessage's MessageSystemAttributeNames (what SDKs send since 2024) is ignored; it reads
 *   only the older AttributeNames. Without SentTimestamp a run could not tell the notifications
 *   sent after it began: the request's names are passed as AttributeNames too.
 * Where it differs otherwise:
 * - Long polling (WaitTimeSeconds > 0) waits the whole wait unless MaxNumberOfMessages are
 *   there (SQS answers as soon as one is), and when a message's visibility expires during the
 *   wait it can be in one response twice. Slower, not kinder; the discovery keeps one delivery per
 *   message id.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { type Emulator, HOST, LOCAL_CREDENTIALS, probeConfig, type StartContext } from './emulator';
import type { AtLeastOnceDelivery } from './sqs-delivery';

/** The part of local-aws-sqs used here. */
type CreateSqsServer = (opts: { port: number; hostname: string; region: string; accountId: string; emulateQueueCreationLifecycle: boolean }) => Promise<Server>;

/** The account id in the emulator's queue URLs and ARNs. */
const LOCAL_ACCOUNT_ID = '000000000000';

export async function startLocalSqs(ctx: StartContext): Promise<Emulator> {
  const t0 = Date.now();
  let server: Server | undefined;
  let delivery: AtLeastOnceDelivery | undefined;
  const stop = async () => {
    delivery?.close();
    delivery = undefined;
    if (!server) return;
    const s = server;
    server = undefined;
    s.closeAllConnections?.();
    await new Promise<void>((res) => s.close(() => res()));
  };
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { createSqsServer } = require('local-aws-sqs') as { createSqsServer: CreateSqsServer };
    // Queues are deleted and created again by tests at once: SQS's 60-second wait between the two is not emulated.
    server = await createSqsServer({ port: 0, hostname: HOST, region: 'us-east-1', accountId: LOCAL_ACCOUNT_ID, emulateQueueCreationLifecycle: false });
    const { port } = server.address() as AddressInfo;
    const endpoint = `http://${HOST}:${port}`;
    if (ctx.sqsDelivery) {
      // Loaded only when asked: it brings the in-memory twins' seeded generator.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { AtLeastOnceDelivery: Delivery } = require('./sqs-delivery') as typeof import('./sqs-delivery');
      delivery = new Delivery(ctx.sqsDelivery, new SQSClient({ ...probeConfig(endpoint, LOCAL_CREDENTIALS), maxAttempts: 3 }));
    }
    answerAsSqs(server, delivery);
    const client = new SQSClient(probeConfig(endpoint, LOCAL_CREDENTIALS));
    try {
      await client.send(new ListQueuesCommand({}));
    } finally {
      client.destroy();
    }
    const startupMs = Date.now() - t0;
    ctx.log(`sqs (local-aws-sqs, in-process${delivery ? ', shuffled and at-least-once' : ''}) answered on ${endpoint} after ${startupMs} ms`);
    return { service: 'sqs', endpoint, startupMs, stop };
  } catch (e) {
    await stop();
    throw new Error(`local-aws-sqs did not start (${(e as Error).message}): it runs in this process, so check that the local-aws-sqs package is installed`, {
      cause: e,
    });
  }
}

const TARGET_HEADER = 'x-amz-target';
const VISIBLE = 'ApproximateNumberOfMessages';
const IN_FLIGHT = 'ApproximateNumberOfMessagesNotVisible';

/**
 * The two requests local-aws-sqs answers otherwise than SQS (the JSON protocol the SDK speaks):
 * - GetQueueAttributes: the request also asks for the in-flight count, and the answer's
 *   ApproximateNumberOfMessages (local-aws-sqs: every message not delayed) becomes that figure
 *   minus the messages in flight, SQS's "available for retrieval";
 * - ReceiveMessage: MessageSystemAttributeNames are also sent as AttributeNames; with `delivery`,
 *   the answer goes through it (shuffled, a share delivered again).
 */
function answerAsSqs(server: Server, delivery?: AtLeastOnceDelivery): void {
  const handlers = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  server.removeAllListeners('request');
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    for (const h of handlers) h.call(server, req, res);
  };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const target = req.headers[TARGET_HEADER];
    if (target !== 'AmazonSQS.GetQueueAttributes' && target !== 'AmazonSQS.ReceiveMessage') return handle(req, res);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let input: Record<string, unknown>;
      try {
        input = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        return handle(replay(req, Buffer.concat(chunks)), res);
      }
      if (target === 'AmazonSQS.ReceiveMessage') {
        const system = Array.isArray(input.MessageSystemAttributeNames) ? (input.MessageSystemAttributeNames as string[]) : [];
        const older = Array.isArray(input.AttributeNames) ? (input.AttributeNames as string[]) : [];
        const asked = [...new Set([...older, ...system])];
        let body = system.length > 0 ? { ...input, AttributeNames: asked } : input;
        if (delivery && typeof input.QueueUrl === 'string') {
          const queueUrl = input.QueueUrl;
          body = { ...body, AttributeNames: delivery.attributeNames(asked) };
          rewriteJsonAnswer(res, (answer) => delivery.deliver(queueUrl, asked, answer));
        }
        return handle(replay(req, Buffer.from(JSON.stringify(body))), res);
      }
      const names = Array.isArray(input.AttributeNames) ? (input.AttributeNames as string[]) : [];
      const wantsCount = names.includes('All') || names.includes(VISIBLE);
      const addedInFlight = wantsCount && !names.includes('All') && !names.includes(IN_FLIGHT);
      const body = Buffer.from(JSON.stringify(addedInFlight ? { ...input, AttributeNames: [...names, IN_FLIGHT] } : input));
      if (wantsCount) {
        rewriteJsonAnswer(res, (answer) => {
          const attrs = (answer as { Attributes?: Record<string, string> }).Attributes;
          if (!attrs || attrs[VISIBLE] === undefined || attrs[IN_FLIGHT] === undefined) return answer;
          attrs[VISIBLE] = String(Math.max(0, Number(attrs[VISIBLE]) - Number(attrs[IN_FLIGHT])));
          if (addedInFlight) delete attrs[IN_FLIGHT];
          return answer;
        });
      }
      handle(replay(req, body), res);
    });
  });
}

/** A request with the same method, URL and headers and `body` (the original's body is consumed). */
function replay(req: IncomingMessage, body: Buffer): IncomingMessage {
  const copy = Readable.from([body]) as unknown as IncomingMessage;
  Object.assign(copy, {
    method: req.method,
    url: req.url,
    headers: { ...req.headers, 'content-length': String(body.length) },
    socket: req.socket,
    httpVersion: req.httpVersion,
  });
  return copy;
}

/**
 * Makes `res.end` send `edit(JSON answer)` instead, once an `edit` that returns a promise settles
 * (errors, non-JSON answers and a failed edit pass unchanged).
 */
function rewriteJsonAnswer(res: ServerResponse, edit: (answer: unknown) => unknown): void {
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  const send = (text: string, rest: unknown[]) => {
    if (!res.headersSent) res.setHeader('content-length', Buffer.byteLength(text));
    end(text, ...rest);
  };
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    if (res.statusCode !== 200 || (typeof chunk !== 'string' && !Buffer.isBuffer(chunk))) return end(chunk, ...rest);
    const original = chunk.toString();
    let edited: unknown;
    try {
      edited = edit(JSON.parse(original));
    } catch {
      return end(chunk, ...rest);
    }
    if (edited instanceof Promise) {
      edited.then(
        (answer) => send(JSON.stringify(answer), rest),
        () => send(original, rest),
      );
    } else send(JSON.stringify(edited), rest);
    return res;
  }) as ServerResponse['end'];
}
