/**
 * A landing file's bytes to rows (lib/aws/s3/landing-files.ts): an empty object is listed but
 * never read, as Spark's PartitioningAwareFileIndex.listFiles keeps only files of length > 0.
 */
import { parseFile } from '../../lib/aws/s3/landing-files';
import { fileDecoder } from '../../lib/engine/formats';
import { parseSchema } from '../../lib/engine/schema';

async function parse(format: string, text: string, schema = 'id INT') {
  const buf = Buffer.from(text);
  const out = { rows: [] as unknown[], deadLetters: [] as unknown[], files: 0 };
  for await (const c of parseFile(fileDecoder(parseSchema(schema), format, {}, 1 << 20), {
    key: 'k',
    file: { path: 's3://b/k', size: buf.length, modifiedMs: null },
    buf,
    bytes: buf.length,
    partitions: [],
    damaged: null,
  })) {
    out.rows.push(...c.rows);
    out.deadLetters.push(...c.deadLetters);
    out.files += c.files ?? 0;
  }
  return out;
}

describe('an empty file is never read, whatever its format', () => {
  it.each([
    ['parquet', 'id INT'],
    ['json', 'id INT'],
    ['csv', 'id INT'],
    ['text', 'value STRING'],
  ])('%s: no rows, no dead letter, one file', async (format, schema) => {
    expect(await parse(format, '', schema)).toEqual({ rows: [], deadLetters: [], files: 1 });
  });

  it('a file that is not empty and not Parquet is still a dead letter', async () => {
    expect((await parse('parquet', 'x')).deadLetters).toHaveLength(1);
  });
});
