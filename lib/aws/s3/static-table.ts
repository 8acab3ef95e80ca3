/**
 * A static table in S3 for stream-static joins (`staticTable.s3(uri, { format, schema })`):
 * every object under the URI, read whole once per run, as JSON lines or CSV with a header line,
 * each row typed by the schema with the engine's parsers (lib/engine/json-record.ts).
 *
 *   ListObjectsV2 (the URI as prefix) ─▶ GetObject of each, in key order ─▶ lines ─▶ typed rows
 *
 * A reference table is not stream input: a row that does not fit the schema fails the run with
 * the object and the line, instead of going to the dead letters.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { InvalidOptionError, SluiceError } from '../../engine/errors';
import type { Row, StaticTableReader } from '../../engine/ports';
import type { Schema } from '../../engine/schema';
import { coerceRecord, parseJsonLine } from '../../engine/json-record';
import type { RetryOptions } from '../request/retry';
import { S3Requests } from './requests';

export interface S3StaticTableOptions {
  readonly client: S3Client;
  /** s3://bucket/key-or-prefix: one object, or every object whose key starts with it. */
  readonly uri: string;
  readonly format: 'json' | 'csv';
  readonly schema: Schema;
  readonly retry?: RetryOptions;
}

export class S3StaticTable implements StaticTableReader {
  readonly description: string;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly requests: S3Requests;

  constructor(private readonly opts: S3StaticTableOptions) {
    const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\/?(.*)$/.exec(opts.uri);
    if (!m)
      throw new InvalidOptionError(
        `static table ${JSON.stringify(opts.uri)} is not an S3 URI: write s3://<bucket>/<key or prefix>, e.g. s3://my-bucket/reference/users/`,
      );
    this.bucket = m[1];
    this.prefix = m[2];
    this.description = opts.uri;
    this.requests = new S3Requests(opts.client, opts.retry, 'S3StaticTable');
  }

  /** Every row of every object under the URI, in key order. */
  async load(): Promise<Row[]> {
    const objects = (await this.requests.listAll(this.bucket, this.prefix)).filter((o) => !o.key.endsWith('/'));
    if (objects.length === 0) {
      throw new SluiceError(
        `static table ${this.description} has no objects: write the table there (${this.opts.format === 'json' ? 'JSON lines' : 'CSV with a header line'}) or fix the URI`,
        { retriable: false },
      );
    }
    const rows: Row[] = [];
    for (const o of objects) {
      const text = (await this.requests.getText(this.bucket, o.key)) ?? '';
      const where = `s3://${this.bucket}/${o.key}`;
      if (this.opts.format === 'json') parseJsonLines(text, this.opts.schema, where, rows);
      else parseCsv(text, this.opts.schema, where, rows);
    }
    return rows;
  }
}

function badRow(where: string, line: number, reason: string): SluiceError {
  return new SluiceError(`static table object ${where} line ${line}: ${reason}: fix the object (a reference table's rows must all fit its schema)`, {
    retriable: false,
    details: { object: where, line },
  });
}

/**
 * JSON lines read as a source reads a record (parseJsonLine: numbers from their text, so a BIGINT
 * beyond 2^53 and a DECIMAL stay exact, where JSON.parse would round them), each row holding the
 * schema's columns.
 */
function parseJsonLines(text: string, schema: Schema, where: string, out: Row[]): void {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    const res = parseJsonLine(schema, line);
    if (!res.ok) throw badRow(where, i + 1, res.reason);
    const row: Row = {};
    for (const c of schema.columns) row[c.name] = res.row[c.name];
    out.push(row);
  }
}

/** RFC 4180 records: fields split on commas, "quoted" fields may hold commas, quotes ("") and line breaks. */
export function csvRecords(text: string): Array<{ line: number; fields: Array<{ text: string; quoted: boolean }> }> {
  const records: Array<{ line: number; fields: Array<{ text: string; quoted: boolean }> }> = [];
  let fields: Array<{ text: string; quoted: boolean }> = [];
  let field = '';
  let quoted = false;
  let inQuotes = false;
  let line = 1;
  let start = 1;
  const endField = () => {
    fields.push({ text: field, quoted });
    field = '';
    quoted = false;
  };
  const endRecord = () => {
    endField();
    if (!(fields.length === 1 && fields[0].text === '' && !fields[0].quoted)) records.push({ line: start, fields });
    fields = [];
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inQuotes) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else inQuotes = false;
      } else {
        if (ch === '\n') line++;
        field += ch;
      }
    } else if (ch === '"' && field === '') {
      inQuotes = true;
      quoted = true;
    } else if (ch === ',') endField();
    else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      endRecord();
      line++;
      start = line;
    } else field += ch;
  }
  if (inQuotes) throw new SluiceError(`a quoted CSV field opened on line ${start} is never closed`, { retriable: false, details: { line: start } });
  if (field !== '' || quoted || fields.length > 0) endRecord();
  return records;
}

function parseCsv(text: string, schema: Schema, where: string, out: Row[]): void {
  let records: ReturnType<typeof csvRecords>;
  try {
    records = csvRecords(text.replace(/^\uFEFF/, ''));
  } catch (e) {
    const line = ((e as SluiceError).details?.line as number) ?? 1;
    throw badRow(where, line, (e as Error).message);
  }
  if (records.length === 0) return;
  const header = records[0].fields.map((f) => f.text.trim());
  const index = schema.columns.map((c) => header.indexOf(c.name));
  const missing = schema.columns.filter((_, i) => index[i] < 0).map((c) => c.name);
  if (missing.length)
    throw badRow(
      where,
      records[0].line,
      `the header (${header.join(',')}) lacks the column${missing.length > 1 ? 's' : ''} ${missing.join(', ')} of the schema`,
    );
  for (const rec of records.slice(1)) {
    if (rec.fields.length !== header.length) throw badRow(where, rec.line, `${rec.fields.length} fields where the header has ${header.length}`);
    const record: Record<string, unknown> = {};
    schema.columns.forEach((c, i) => {
      const f = rec.fields[index[i]];
      // An empty unquoted field is null (Spark's CSV reader); a quoted "" is the empty string.
      if (f.text === '' && !f.quoted) record[c.name] = null;
      else if (c.type === 'LONG' && /^\s*[-+]?\d+\s*$/.test(f.text) && !Number.isSafeInteger(Number(f.text)))
        record[c.name] = BigInt(f.text.trim()); // (beyond 2^53: exact, as the schema reads a BIGINT)
      else if (c.type === 'INT' || c.type === 'LONG' || c.type === 'DOUBLE')
        record[c.name] = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(f.text) ? Number(f.text) : f.text;
      else if (c.type === 'BOOLEAN') record[c.name] = /^true$/i.test(f.text) ? true : /^false$/i.test(f.text) ? false : f.text;
      else record[c.name] = f.text;
    });
    const res = coerceRecord(schema, record);
    if (!res.ok) throw badRow(where, rec.line, res.reason);
    out.push(res.row);
  }
}
