/**
 * What one SQS message body says about S3, as S3 event notifications write it. Pure: no request.
 *
 *   {"Records":[{eventName:"ObjectCreated:Put", eventTime, s3:{bucket:{name}, object:{key, size, eTag}}}]}
 *                                   ─▶ one `created` per record (a key URL-encoded, '+' for a space)
 *   eventName ObjectRemoved:* (any other non-create event)        ─▶ `ignored` (reason: the event name)
 *   {"Event":"s3:TestEvent", ...}   (sent once when a notification is configured) ─▶ `test`
 *   {"detail-type":"Object Created","source":"aws.s3","detail":{...}}  (EventBridge to SQS)
 *                                   ─▶ one `created` (EventBridge keys are not URL-encoded)
 *   {"Type":"Notification","Message":"<one of the above>"}  (S3 ─▶ SNS ─▶ SQS without raw delivery)
 *                                   ─▶ what the inner message says
 *   anything else (not JSON, no Records, a record without a key, a key that does not decode)
 *                                   ─▶ `malformed` with the reason
 *
 * The shapes: https://docs.aws.amazon.com/AmazonS3/latest/userguide/notification-content-structure.html
 * and https://docs.aws.amazon.com/AmazonS3/latest/userguide/ev-events.html.
 */

/** An object S3 says was created. */
interface S3ObjectCreated {
  readonly kind: 'created';
  readonly bucket: string;
  /** The key as S3 stores it (decoded). */
  readonly key: string;
  readonly size: number;
  /** The ETag without quotes ('' when the event carries none). */
  readonly etag: string;
  /** The event time, epoch ms. */
  readonly lastModified: number;
  /** The event's name, e.g. `ObjectCreated:Put`, for logs. */
  readonly eventName: string;
}

/** An S3 event that names no new file (ObjectRemoved, ObjectRestore, ...). */
interface S3OtherEvent {
  readonly kind: 'ignored';
  readonly bucket: string;
  readonly key: string;
  readonly eventName: string;
}

export type S3EventRecord = S3ObjectCreated | S3OtherEvent;

export type ParsedNotification =
  | { readonly kind: 'records'; readonly records: readonly S3EventRecord[] }
  | { readonly kind: 'test'; readonly bucket?: string }
  | { readonly kind: 'malformed'; readonly reason: string };

/** Parses one SQS message body. Never throws. */
export function parseS3Notification(body: string | undefined): ParsedNotification {
  if (body === undefined || body.trim() === '') return malformed('the message body is empty');
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (e) {
    return malformed(`the message body is not JSON (${(e as Error).message})`);
  }
  return parseValue(json, 0);
}

function parseValue(json: unknown, depth: number): ParsedNotification {
  if (!isObject(json)) return malformed('the message body is not a JSON object');
  // S3 ─▶ SNS ─▶ SQS without raw message delivery: the S3 event is the SNS envelope's Message.
  if (json.Type === 'Notification' && typeof json.Message === 'string' && depth === 0) {
    let inner: unknown;
    try {
      inner = JSON.parse(json.Message);
    } catch (e) {
      return malformed(`the SNS envelope's Message is not JSON (${(e as Error).message})`);
    }
    return parseValue(inner, depth + 1);
  }
  if (json.Event === 's3:TestEvent') return { kind: 'test', ...(typeof json.Bucket === 'string' ? { bucket: json.Bucket } : {}) };
  if (json.source === 'aws.s3' && typeof json['detail-type'] === 'string') return eventBridge(json);
  if (!Array.isArray(json.Records))
    return malformed('the message is neither an S3 event notification (no Records array), an s3:TestEvent nor an EventBridge S3 event');
  if (json.Records.length === 0) return malformed('the S3 event notification has no records');
  const records: S3EventRecord[] = [];
  for (const [i, r] of json.Records.entries()) {
    const parsed = s3Record(r);
    if (typeof parsed === 'string') return malformed(`record ${i}: ${parsed}`);
    records.push(parsed);
  }
  return { kind: 'records', records };
}

/** One record of an S3 event notification, or why it is not one. */
function s3Record(r: unknown): S3EventRecord | string {
  if (!isObject(r)) return 'not an object';
  const eventName = r.eventName;
  if (typeof eventName !== 'string' || eventName === '') return 'no eventName';
  if (typeof r.eventSource === 'string' && r.eventSource !== 'aws:s3') return `eventSource is ${JSON.stringify(r.eventSource)}, not aws:s3`;
  const s3 = isObject(r.s3) ? r.s3 : undefined;
  const bucket = s3 && isObject(s3.bucket) && typeof s3.bucket.name === 'string' ? s3.bucket.name : undefined;
  const object = s3 && isObject(s3.object) ? s3.object : undefined;
  if (!bucket) return 'no s3.bucket.name';
  if (!object || typeof object.key !== 'string' || object.key === '') return 'no s3.object.key';
  const key = decodeEventKey(object.key);
  if (key === undefined) return `s3.object.key ${JSON.stringify(object.key)} is not URL-encoded UTF-8`;
  // S3 writes `ObjectCreated:Put`; a few tools write `s3:ObjectCreated:Put`.
  const name = eventName.startsWith('s3:') ? eventName.slice(3) : eventName;
  if (!name.startsWith('ObjectCreated:')) return { kind: 'ignored', bucket, key, eventName };
  const size = object.size;
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) return `s3.object.size ${JSON.stringify(size)} is not a byte count`;
  const time = typeof r.eventTime === 'string' ? Date.parse(r.eventTime) : Number.NaN;
  if (!Number.isFinite(time)) return `eventTime ${JSON.stringify(r.eventTime)} is not a time`;
  return { kind: 'created', bucket, key, size, etag: unquote(object.eTag), lastModified: time, eventName };
}

/** An EventBridge S3 event (`Object Created`, `Object Deleted`, ...) delivered to SQS by a rule. */
function eventBridge(json: Record<string, unknown>): ParsedNotification {
  const detailType = json['detail-type'] as string;
  const detail = isObject(json.detail) ? json.detail : undefined;
  const bucket = detail && isObject(detail.bucket) && typeof detail.bucket.name === 'string' ? detail.bucket.name : undefined;
  const object = detail && isObject(detail.object) ? detail.object : undefined;
  if (!bucket || !object || typeof object.key !== 'string' || object.key === '')
    return malformed(`the EventBridge ${detailType} event has no detail.bucket.name or detail.object.key`);
  const key = object.key;
  if (detailType !== 'Object Created') return { kind: 'records', records: [{ kind: 'ignored', bucket, key, eventName: detailType }] };
  const size = object.size;
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
    return malformed(`the EventBridge event's detail.object.size ${JSON.stringify(size)} is not a byte count`);
  const time = typeof json.time === 'string' ? Date.parse(json.time) : Number.NaN;
  if (!Number.isFinite(time)) return malformed(`the EventBridge event's time ${JSON.stringify(json.time)} is not a time`);
  return { kind: 'records', records: [{ kind: 'created', bucket, key, size, etag: unquote(object.etag), lastModified: time, eventName: detailType }] };
}

/**
 * An S3 event notification's key: URL-encoded as in a form (`+` for a space, `%2B` for a plus),
 * undefined when it does not decode.
 */
export function decodeEventKey(encoded: string): string | undefined {
  try {
    return decodeURIComponent(encoded.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

function unquote(etag: unknown): string {
  return typeof etag === 'string' ? etag.replace(/^"|"$/g, '') : '';
}

function malformed(reason: string): ParsedNotification {
  return { kind: 'malformed', reason };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
