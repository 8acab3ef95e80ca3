/**
 * S3 event notifications to SQS for s3rver, which answers PutBucketNotificationConfiguration with
 * NotImplemented: a Koa middleware that keeps each bucket's queue configurations, and a listener
 * on s3rver's own object events that sends them to the local SQS as S3 does.
 *
 *   PUT  /<bucket>?notification  (QueueConfigurations)  ─▶ kept for the bucket (replacing the last);
 *                                                          S3's s3:TestEvent sent to each queue
 *   GET  /<bucket>?notification                           ─▶ the configuration kept
 *   an object PUT, POST (a form or CompleteMultipartUpload) or COPY answered 200
 *                                                         ─▶ one message per matching configuration:
 *                                                            event s3:ObjectCreated:* (or the exact
 *                                                            name), the key's prefix and suffix
 *                                                            rules, the key URL-encoded, the ETag
 *   DELETE                                                ─▶ s3:ObjectRemoved:* configurations
 *
 * s3rver's events differ from S3's, and are rewritten: a raw key (S3: URL-encoded, '+' for a
 * space), no ETag for a copy (read from the store here). Left as s3rver names it: a completed
 * multipart upload is `ObjectCreated:Post` (S3: `ObjectCreated:CompleteMultipartUpload`), which
 * an `s3:ObjectCreated:*` configuration matches either way. Delivery is asynchronous, as on S3: a
 * message arrives moments after the write is answered. A message that cannot be sent (no SQS in the stack, a
 * queue that does not exist) is dropped with a warning, as S3 drops what it cannot deliver.
 * Topic and Lambda configurations are refused (NotImplemented): the local stack has neither.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from './emulator';
import type { KoaLikeContext } from './s3-conditional-writes';

interface QueueConfiguration {
  readonly id: string;
  readonly queueArn: string;
  readonly events: readonly string[];
  readonly prefix: string;
  readonly suffix: string;
}

/** One of s3rver's object events (lib/models/event.js): S3's shape, with the differences above. */
interface S3rverEvent {
  readonly Records: Array<{
    eventName: string;
    eventTime: string;
    s3: { bucket: { name: string; arn?: string }; object: { key: string; size?: number; eTag?: string; sequencer?: string }; configurationId?: string };
    [more: string]: unknown;
  }>;
}

/** The part of s3rver used here: its Koa app's event and its store's metadata. */
interface NotifyingS3rver {
  on(event: 'event', listener: (e: S3rverEvent) => void): unknown;
  readonly store: { getMetadata(bucket: string, key: string): Promise<Record<string, string> | null | undefined> };
}

type Next = () => Promise<unknown>;

/**
 * Wires `server` (s3rver, before run()): returns the middleware to put in front of its routes.
 * `sqsEndpoint()` says where the local SQS answers (undefined: not started).
 */
export function s3Notifications(server: NotifyingS3rver, sqsEndpoint: () => string | undefined, warn: (msg: string) => void = () => undefined) {
  const configs = new Map<string, readonly QueueConfiguration[]>();
  let client: SQSClient | undefined;
  let clientFor: string | undefined;
  const send = async (queueArn: string, body: string) => {
    const endpoint = sqsEndpoint();
    const parts = queueArn.split(':');
    if (!endpoint || parts.length !== 6) {
      warn(`s3 notification to ${queueArn} dropped: ${endpoint ? 'not a queue ARN' : 'the local stack runs no SQS (start it with services [..., "sqs"])'}`);
      return;
    }
    if (clientFor !== endpoint) {
      client?.destroy();
      client = new SQSClient({ region: LOCAL_REGION, endpoint, credentials: { ...LOCAL_CREDENTIALS }, maxAttempts: 3 });
      clientFor = endpoint;
    }
    try {
      await client!.send(new SendMessageCommand({ QueueUrl: `${endpoint}/${parts[4]}/${parts[5]}`, MessageBody: body }));
    } catch (e) {
      warn(`s3 notification to ${queueArn} dropped: ${(e as Error).message}`);
    }
  };

  server.on('event', (event) => {
    void (async () => {
      for (const record of event.Records) {
        const bucket = record.s3.bucket.name;
        const key = record.s3.object.key;
        const eventName = record.eventName;
        for (const c of configs.get(bucket) ?? []) {
          if (!c.events.some((e) => matchesEvent(e, eventName)) || !key.startsWith(c.prefix) || !key.endsWith(c.suffix)) continue;
          const object = { ...record.s3.object, key: encodeKey(key) };
          if (eventName.startsWith('ObjectCreated:') && object.eTag === undefined) {
            const etag = (await server.store.getMetadata(bucket, key))?.etag;
            if (etag) object.eTag = etag.replace(/^"|"$/g, '');
          }
          const body = {
            Records: [
              { ...record, eventName, s3: { ...record.s3, configurationId: c.id, bucket: { ...record.s3.bucket, arn: `arn:aws:s3:::${bucket}` }, object } },
            ],
          };
          await send(c.queueArn, JSON.stringify(body));
        }
      }
    })();
  });

  return async (ctx: KoaLikeContext, next: Next): Promise<void> => {
    const bucket = bucketOf(ctx.path);
    if (!bucket || !/(^|&)notification(=|&|$)/.test(ctx.querystring)) return void (await next());
    if (ctx.method === 'GET') {
      ctx.status = 200;
      ctx.type = 'application/xml';
      ctx.body = toXml(configs.get(bucket) ?? []);
      return;
    }
    if (ctx.method !== 'PUT') return void (await next());
    const xml = await readBody(ctx);
    if (/<(TopicConfiguration|CloudFunctionConfiguration|EventBridgeConfiguration)>/.test(xml)) {
      ctx.status = 501;
      ctx.type = 'application/xml';
      ctx.body = errorXml('NotImplemented', 'the local stack sends bucket notifications to SQS queues only');
      return;
    }
    const parsed = parseQueueConfigurations(xml);
    configs.set(bucket, parsed);
    ctx.status = 200;
    ctx.body = '';
    const test = { Service: 'Amazon S3', Event: 's3:TestEvent', Time: new Date().toISOString(), Bucket: bucket, RequestId: 'LOCAL', HostId: 'local' };
    for (const arn of new Set(parsed.map((c) => c.queueArn))) await send(arn, JSON.stringify(test));
  };
}

/** Whether a configured event (`s3:ObjectCreated:*`, `s3:ObjectCreated:Put`, ...) covers `eventName` (`ObjectCreated:Put`). */
function matchesEvent(configured: string, eventName: string): boolean {
  const c = configured.replace(/^s3:/, '');
  return c.endsWith(':*') ? eventName.startsWith(c.slice(0, -1)) : c === eventName;
}

/** A key as S3 writes it in a notification: URL-encoded, '+' for a space. */
function encodeKey(key: string): string {
  return encodeURIComponent(key).replace(/%20/g, '+').replace(/%2F/g, '/');
}

function bucketOf(path: string): string | undefined {
  const m = /^\/([^/]+)\/?$/.exec(path);
  return m ? decodeURIComponent(m[1]) : undefined;
}

/** The request body (s3rver's routes have not read it). */
async function readBody(ctx: KoaLikeContext): Promise<string> {
  const req = (ctx as unknown as { req: NodeJS.ReadableStream }).req;
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const unescapeXml = (s: string) => s.replace(/&(amp|lt|gt|quot|apos);/g, (_, e: string) => XML_ENTITIES[e]);
const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const elements = (xml: string, name: string) => [...xml.matchAll(new RegExp(`<${name}>([\\s\\S]*?)</${name}>`, 'g'))].map((m) => m[1]);

function parseQueueConfigurations(xml: string): QueueConfiguration[] {
  return elements(xml, 'QueueConfiguration').map((c, i) => {
    const rules = new Map(
      elements(c, 'FilterRule').map((r) => [unescapeXml(elements(r, 'Name')[0] ?? '').toLowerCase(), unescapeXml(elements(r, 'Value')[0] ?? '')]),
    );
    return {
      id: unescapeXml(elements(c, 'Id')[0] ?? `config-${i}`),
      queueArn: unescapeXml(elements(c, 'Queue')[0] ?? ''),
      events: elements(c, 'Event').map(unescapeXml),
      prefix: rules.get('prefix') ?? '',
      suffix: rules.get('suffix') ?? '',
    };
  });
}

function toXml(configs: readonly QueueConfiguration[]): string {
  const rule = (name: string, value: string) => (value ? `<FilterRule><Name>${name}</Name><Value>${escapeXml(value)}</Value></FilterRule>` : '');
  const body = configs
    .map(
      (c) =>
        `<QueueConfiguration><Id>${escapeXml(c.id)}</Id><Queue>${escapeXml(c.queueArn)}</Queue>${c.events.map((e) => `<Event>${escapeXml(e)}</Event>`).join('')}` +
        (c.prefix || c.suffix ? `<Filter><S3Key>${rule('prefix', c.prefix)}${rule('suffix', c.suffix)}</S3Key></Filter>` : '') +
        '</QueueConfiguration>',
    )
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<NotificationConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${body}</NotificationConfiguration>`;
}

function errorXml(code: string, message: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
}
