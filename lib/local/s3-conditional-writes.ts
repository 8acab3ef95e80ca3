/**
 * S3's conditional writes for s3rver, which ignores `If-None-Match` and `If-Match` on PUT (it reads
 * them only on GET), and S3's other refusals s3rver does not make: a Koa middleware put in front of
 * s3rver's routes that answers as S3 does.
 *
 *   PUT/POST key of more than 1,024 bytes of UTF-8  ─▶ 400 KeyTooLongError (s3rver: a 500 from the
 *                                                      file system, which a client retries as if
 *                                                      S3 were throttling)
 *   PUT key, If-None-Match: *   key exists            ─▶ 412 PreconditionFailed, nothing written
 *   CompleteMultipartUpload (POST ?uploadId=), If-None-Match: *, key exists
 *                                                     ─▶ 412 PreconditionFailed, nothing written
 *                                                        (the upload stays, to be aborted)
 *   AbortMultipartUpload (DELETE ?uploadId=)          ─▶ 204, the upload's parts removed (s3rver
 *                                                        has no route for it: 405)
 *                               key absent            ─▶ s3rver writes it
 *   PUT key, If-Match: "<etag>" key absent            ─▶ 404 NoSuchKey
 *                               stored ETag differs   ─▶ 412 PreconditionFailed
 *   two conditional PUTs of one key at once           ─▶ the second waits for the first, then is
 *                                                        checked (S3 may answer 409 instead; both
 *                                                        mean "not written", and the callers
 *                                                        handle both)
 *
 * Without it, every write-once entry of an end-to-end test could be overwritten silently and a
 * test of the checkpoint's 412 branch would prove nothing.
 */

import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { S3_KEY_MAX_BYTES } from '../aws/s3/requests';

/** The part of s3rver's filesystem store used here. */
export interface ObjectStore {
  getMetadata(bucket: string, key: string): Promise<Record<string, string> | null | undefined>;
  existsObject(bucket: string, key: string): Promise<boolean>;
  /** Where s3rver keeps a resource; with key undefined and 'uploads', the bucket's multipart uploads. */
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
}

/** The part of a Koa context used here. */
export interface KoaLikeContext {
  method: string;
  path: string;
  querystring: string;
  get(header: string): string;
  status: number;
  type: string;
  body: unknown;
}

type Next = () => Promise<unknown>;

/** The (bucket, key) of a path-style object URL, or null for a bucket-level or service-level request. */
function objectOf(path: string): { bucket: string; key: string } | null {
  const slash = path.indexOf('/', 1);
  if (slash < 0 || slash === path.length - 1) return null;
  return { bucket: decodeURIComponent(path.slice(1, slash)), key: decodeURIComponent(path.slice(slash + 1)) };
}

function errorXml(code: string, message: string, condition?: string): string {
  const cond = condition ? `<Condition>${condition}</Condition>` : '';
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message>${cond}</Error>`;
}

/** S3's ETag compare: quotes optional, `*` matches any existing object. */
function etagMatches(header: string, stored: string | undefined): boolean {
  if (stored === undefined) return false;
  const bare = (t: string) => t.trim().replace(/^W\//, '').replace(/^"|"$/g, '');
  return header.split(',').some((t) => t.trim() === '*' || bare(t) === bare(stored));
}

/** The middleware, for `s3rver.middleware.unshift(...)` before `run()`. */
export function conditionalWrites(store: ObjectStore): (ctx: KoaLikeContext, next: Next) => Promise<void> {
  /** The tail of the conditional PUTs in flight, per bucket/key: one at a time per key. */
  const inFlight = new Map<string, Promise<void>>();
  return async (ctx, next) => {
    const written = ctx.method === 'PUT' || ctx.method === 'POST' ? objectOf(ctx.path) : null;
    if (written && Buffer.byteLength(written.key, 'utf8') > S3_KEY_MAX_BYTES) {
      ctx.status = 400;
      ctx.type = 'application/xml';
      ctx.body = errorXml('KeyTooLongError', 'Your key is too long');
      return;
    }
    const uploadId = /(?:^|&)uploadId=([^&]*)/.exec(ctx.querystring)?.[1];
    if (ctx.method === 'DELETE' && uploadId !== undefined && objectOf(ctx.path)) {
      const { bucket } = objectOf(ctx.path)!;
      const id = decodeURIComponent(uploadId);
      if (/^[0-9a-f]+$/.test(id)) await rm(join(store.getResourcePath(bucket, undefined, 'uploads'), id), { recursive: true, force: true });
      ctx.status = 204;
      ctx.body = null;
      return;
    }
    const ifNoneMatch = ctx.get('if-none-match');
    const ifMatch = ctx.get('if-match');
    // Object PUTs (not a part upload, whose conditions S3 checks at completion) and the completion
    const conditional = (ctx.method === 'PUT' && !/(^|&)partNumber=/.test(ctx.querystring)) || (ctx.method === 'POST' && uploadId !== undefined);
    const target = conditional && (ifNoneMatch || ifMatch) ? written : null;
    if (!target) {
      await next();
      return;
    }
    const id = `${target.bucket}/${target.key}`;
    const before = inFlight.get(id) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = before.then(() => mine);
    inFlight.set(id, tail);
    await before;
    try {
      const exists = await store.existsObject(target.bucket, target.key);
      if (ifNoneMatch && ifNoneMatch.trim() === '*' && exists) {
        ctx.status = 412;
        ctx.type = 'application/xml';
        ctx.body = errorXml('PreconditionFailed', 'At least one of the pre-conditions you specified did not hold', 'If-None-Match');
        return;
      }
      if (ifMatch) {
        if (!exists) {
          ctx.status = 404;
          ctx.type = 'application/xml';
          ctx.body = errorXml('NoSuchKey', 'The specified key does not exist.');
          return;
        }
        const meta = await store.getMetadata(target.bucket, target.key);
        if (!etagMatches(ifMatch, meta?.etag)) {
          ctx.status = 412;
          ctx.type = 'application/xml';
          ctx.body = errorXml('PreconditionFailed', 'At least one of the pre-conditions you specified did not hold', 'If-Match');
          return;
        }
      }
      await next();
    } finally {
      release();
      if (inFlight.get(id) === tail) inFlight.delete(id);
    }
  };
}
