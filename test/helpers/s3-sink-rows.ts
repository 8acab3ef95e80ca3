/** The rows an S3 JSON-lines sink wrote under `prefix` (its batch-N.jsonl objects), sorted by their `id`. */
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { testClients } from './stack';

export async function sinkRows(bucket: string, prefix: string): Promise<Array<Record<string, unknown>>> {
  const { s3 } = testClients();
  const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}/` }));
  const rows: Array<Record<string, unknown>> = [];
  for (const key of (page.Contents ?? []).map((o) => o.Key!).filter((k) => /\/batch-\d+\.jsonl$/.test(k))) {
    const text = await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToString();
    for (const line of text.split('\n')) if (line.trim() !== '') rows.push(JSON.parse(line));
  }
  return rows.sort((a, b) => String(a.id).localeCompare(String(b.id)));
}
