/**
 * Reading back what a CSV sink wrote: every `.csv` object under a prefix, downloaded, and their
 * rows as DuckDB's CSV reader (a reader nobody here wrote) reads them, with the columns' types
 * given (test/integration/init-csv-sink.test.ts, test/package/scaffold.test.ts).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { withDuckDb } from '../../lib/conformance/parquet-file';

/** Every `.csv` object under `s3://bucket/prefix/`, in key order, downloaded into a new folder under `dir`: the local paths and the texts. */
export async function downloadCsvObjects(s3: S3Client, bucket: string, prefix: string, dir: string): Promise<Array<{ file: string; text: string }>> {
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${prefix}/` }));
  const into = mkdtempSync(join(dir, 'csv-'));
  const out: Array<{ file: string; text: string }> = [];
  for (const key of (listed.Contents ?? []).map((c) => c.Key!).sort()) {
    if (!key.endsWith('.csv')) continue;
    const text = await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToString();
    const file = join(into, key.slice(prefix.length + 1).replace(/\//g, '__'));
    writeFileSync(file, text);
    out.push({ file, text });
  }
  return out;
}

/**
 * The rows of CSV files with a header row and Spark's CSV writer's quoting (`\` escapes a quote),
 * read by DuckDB with `columns` (name to DuckDB type) and sorted by `order`; a TIMESTAMP as ISO
 * text with milliseconds and Z, a BIGINT as a number.
 */
export async function csvRowsByDuckDb(files: string[], columns: Record<string, string>, order: string): Promise<Array<Record<string, unknown>>> {
  const select = Object.entries(columns)
    .map(([c, t]) => (t === 'TIMESTAMP' ? `strftime("${c}", '%Y-%m-%dT%H:%M:%S.%gZ') AS "${c}"` : `"${c}"`))
    .join(', ');
  const types = Object.entries(columns)
    .map(([c, t]) => `'${c}': '${t}'`)
    .join(', ');
  const list = files.map((f) => `'${f}'`).join(', ');
  const sql = `SELECT ${select} FROM read_csv([${list}], header = true, escape = '\\', quote = '"', columns = {${types}}) ORDER BY "${order}"`;
  const reader = await withDuckDb((conn) => conn.runAndReadAll(sql));
  return reader.getRowObjectsJS().map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])));
}
