/**
 * S3's PUT is atomic: a reader sees the old object or the new one, whole, and the PUT is answered
 * only once the object is stored. s3rver writes an object straight into its final file (a reader
 * meanwhile gets the part written so far) and, for a body it holds in memory, answers before the
 * file is flushed, so a GET right after the PUT's answer can read it cut short. Partitioned runs on
 * worker threads read what another thread has just written; on s3rver one failed with "Unexpected
 * end of JSON input" where S3 cannot. This makes the local store as strict as S3: the body goes to
 * a temporary file beside the object (its name does not end in s3rver's object suffix, so no
 * listing sees it), then replaces the object with a rename, before the PUT is answered.
 *
 *   PUT key ─▶ body to key._S3rver_object.<uuid>.partial ─▶ metadata ─▶ rename over key._S3rver_object ─▶ 200
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';

/** The part of s3rver's filesystem store replaced and used here. */
export interface PutObjectStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5: string): Promise<void>;
  putObject(object: StoredObject): Promise<{ size: number; md5: string }>;
}

/** The object s3rver hands its store: its body in memory or as a stream. */
interface StoredObject {
  readonly bucket: string;
  readonly key: string;
  readonly metadata: Record<string, string>;
  readonly content: Buffer | Readable;
}

async function bodyOf(content: Buffer | Readable): Promise<Buffer> {
  if (Buffer.isBuffer(content)) return content;
  const chunks: Buffer[] = [];
  for await (const chunk of content) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks);
}

/** Replaces the store's putObject (multipart completion goes through it too) with an atomic one. */
export function atomicPuts(store: PutObjectStore): void {
  store.putObject = async (object) => {
    const body = await bodyOf(object.content);
    const objectPath = store.getResourcePath(object.bucket, object.key, 'object');
    await mkdir(dirname(objectPath), { recursive: true });
    const partial = `${objectPath}.${randomUUID()}.partial`;
    const md5 = createHash('md5').update(body).digest('hex');
    try {
      await writeFile(partial, body);
      await store.putMetadata(object.bucket, object.key, object.metadata, md5);
      await rename(partial, objectPath);
    } catch (e) {
      await rm(partial, { force: true });
      throw e;
    }
    return { size: body.length, md5 };
  };
}
