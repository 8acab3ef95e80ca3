/**
 * What the S3 file sinks share, whatever they encode (JSON lines in file-sink.ts, Parquet in
 * parquet-sink.ts): deterministic objects per batch, optionally partitioned by a column, and a
 * sink log that lists the committed objects of each batch.
 *
 *     <prefix>/<column>=<value>/part-<batchId 10>-<n 5>.<ext>    the rows (n counts the batch's
 *     <prefix>/part-<batchId 10>-<n 5>.<ext>                       objects; without partitionBy)
 *     <prefix>/_sink_log/<batchId 10>                             {"objects": [...]}: written last
 *
 * The guard is the order of writes plus determinism, as in Spark's file sink (its
 * `_spark_metadata` log):
 *
 *     batch 7:  PUT part-…07-00000 ─▶ PUT part-…07-00001 ─▶ PUT _sink_log/…07   ◀─ committed here
 *     crash before the log entry: the objects are there but listed nowhere; log readers skip them
 *     replay of 7: the same rows give the same objects under the same keys (rows sorted within a
 *     partition, so their order does not matter; a streamed stateless batch, addBatchChunks, fills
 *     its objects in the order its rows come, which its replay repeats); each PUT is write-once (If-None-Match: *), so
 *     an object already there with the same content passes (412, GET, equal) and one with other
 *     content (a stale run, an earlier checkpoint on this prefix) is a loud error, never overwritten
 *
 * An empty batch writes a log entry with no objects ("7 produced nothing"). S3 PUTs are atomic
 * per object, so a reader racing a replay reads either the old or the new bytes, which are equal.
 *
 * No lease fence here: S3 has no condition on another object. The write-once PUTs are the fence:
 * a run that lost its lease can only write batch N from the same write-once offsets/N, i.e. the
 * same objects with the same content; a writer with other content fails instead of overwriting.
 * `ctx.onPieceWritten(i)` follows each object written (the mid-sink crash point).
 * The log is keyed by batch ID alone: give each checkpoint its own sink prefix (a new checkpoint
 * starts again at batch 0 and would overwrite the old log entries).
 *
 * Rows no attempt could write (Sink.check, called by the executor before the batch's effects; the
 * refused rows become dead letters with the reason, the rest is written): a partition value whose
 * key would pass S3's 1,024 bytes of UTF-8 (the prefix, the escaped value, the object's name: AWS
 * answers 400 KeyTooLongError, every replay again), a value the partition granularity cannot read
 * as a timestamp, and what the encoding refuses (`rowRefusal`: a Parquet column's value of
 * another type). The verdict depends on the row and the batch ID only, so a replay refuses the
 * same rows. addBatch itself still fails on such a row (a caller that skipped the check).
 *
 * No string of a whole batch: an object holds at most maxRowsPerObject rows and maxBytesPerObject
 * (128 MiB) of their JSON, so its text stays far below V8's longest string (about 512 MiB),
 * however wide the rows; a streamed batch holds the open objects only.
 *
 * Cost of a batch: one PUT per (partition value, up to `maxRowsPerObject` rows) plus one PUT for
 * the log entry. A replay costs the same PUTs (each answered 412) plus a GET of each, and adds nothing.
 */
import { InvalidOptionError, SluiceError } from '../../engine/errors';
import { jsonLineOf } from '../../engine/output-json';
import type { Json, OutputColumnType, OutputRow, RefusedRow, Sink, SinkContext } from '../../engine/ports';
import { formatTimestamp, parseTimestamp } from '../../engine/timestamps';
import { mapLimit } from '../request/concurrency';
import { paddedBatchId } from './batch-files';
import { S3Prefix, type S3PrefixOptions } from './prefix';
import { S3_KEY_MAX_BYTES } from './requests';

export type PartitionGranularity = 'value' | 'day' | 'hour';

export interface S3LoggedSinkOptions extends S3PrefixOptions {
  /**
   * The column whose value names each object's folder, e.g. `date`; a field of a struct column
   * with a dot, e.g. `window.start`.
   * @default no partitioning
   */
  readonly partitionBy?: string;
  /**
   * How the partition column's value becomes the folder: `value` as it is, `day` (YYYY-MM-DD)
   * or `hour` (YYYY-MM-DDTHH) of a timestamp.
   * @default 'value'
   */
  readonly partitionGranularity?: PartitionGranularity;
  /** Rows per object; a larger partition of a batch becomes several objects. @default 100000 */
  readonly maxRowsPerObject?: number;
  /**
   * Bytes of JSON text (the rows' JSON, one line each) per object: an object is cut before a row
   * that would pass it (a single larger row is an object of its own), so that no object's text
   * nears V8's longest string (about 512 MiB; the JSON-lines object is one string, the Parquet
   * writer holds its values) whatever the rows' widths. @default 128 MiB
   */
  readonly maxBytesPerObject?: number;
  /** Objects written at once. @default 8 */
  readonly maxConcurrency?: number;
}

/** One object of a batch, as its log entry names it. */
export interface SinkLogObject {
  /** Key relative to the sink's prefix. */
  readonly key: string;
  /** The partition folder's value (null: not partitioned, or a null value, in `__HIVE_DEFAULT_PARTITION__`). */
  readonly partition: string | null;
  readonly rows: number;
  readonly bytes: number;
}

export interface SinkLogEntry {
  readonly version: 1;
  readonly batchId: number;
  readonly queryId: string;
  readonly rows: number;
  readonly objects: SinkLogObject[];
}

/** The rows of one object, sorted by their JSON text unless the query sorts them (`lines[i]` is `jsonLineOf(rows[i], ctx.columnTypes)`: output-json.ts). */
export interface ObjectRows {
  readonly rows: OutputRow[];
  readonly lines: string[];
}

const SINK_LOG_DIR = '_sink_log';
/** The folder value of a null partition value, as Hive and Spark name it. */
const NULL_PARTITION = '__HIVE_DEFAULT_PARTITION__';

export abstract class S3LoggedSink extends S3Prefix implements Sink {
  protected readonly partitionBy: string | null;
  protected readonly granularity: PartitionGranularity;
  protected readonly maxRowsPerObject: number;
  protected readonly maxBytesPerObject: number;
  protected readonly maxConcurrency: number;

  /** `who` names the class in the errors about its options and rows. */
  protected constructor(
    opts: S3LoggedSinkOptions,
    protected readonly who: string,
  ) {
    super(opts, who);
    if (
      opts.partitionBy !== undefined &&
      (typeof opts.partitionBy !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/.test(opts.partitionBy))
    ) {
      throw new InvalidOptionError(
        `${who} partitionBy ${JSON.stringify(opts.partitionBy)} must be a column name, or column.field for a struct column such as window.start`,
      );
    }
    const g = opts.partitionGranularity ?? 'value';
    if (!['value', 'day', 'hour'].includes(g)) {
      throw new InvalidOptionError(
        `${who} partitionGranularity ${JSON.stringify(g)} is not one of "value", "day", "hour": pass one of them, or leave it out for "value"`,
      );
    }
    if (g !== 'value' && opts.partitionBy === undefined) {
      throw new InvalidOptionError(
        `${who} partitionGranularity "${g}" needs partitionBy: name the timestamp column to partition by, e.g. partitionBy: "window.start"`,
      );
    }
    this.partitionBy = opts.partitionBy ?? null;
    this.granularity = g;
    this.maxRowsPerObject = positiveInteger(who, opts.maxRowsPerObject, 100_000, 'maxRowsPerObject');
    this.maxBytesPerObject = positiveInteger(who, opts.maxBytesPerObject, 128 * 1024 * 1024, 'maxBytesPerObject');
    this.maxConcurrency = positiveInteger(who, opts.maxConcurrency, 8, 'maxConcurrency');
  }

  /** The object name's ending, e.g. `.jsonl`. */
  protected abstract readonly extension: string;
  protected abstract readonly contentType: string;

  /** Checks what the encoding needs of the query, before any write (throws InvalidOptionError). */
  protected checkContext(_ctx: SinkContext): void {}

  /** The bytes (or text) of one object; deterministic: the same rows give the same content. */
  protected abstract encode(part: ObjectRows, batchId: number, ctx: SinkContext): string | Uint8Array;

  async addBatch(batchId: number, rows: OutputRow[], ctx: SinkContext): Promise<void> {
    this.checkBatch(batchId, ctx);
    // Group by partition (sorted, so the object numbering is the same on every attempt), sort
    // each group's rows by their JSON text (so which rows an object holds depends on the batch's
    // rows, not on the order a replay emits them in; a query that sorts its output gives them in
    // an order that is the same on a replay, kept), then split it into objects of at most
    // maxRowsPerObject rows and maxBytesPerObject bytes.
    const groups = new Map<string | null, ObjectLine[]>();
    for (const row of rows) {
      const part = this.partitionBy === null ? null : this.partitionValue(row);
      let g = groups.get(part);
      if (!g) groups.set(part, (g = []));
      const line = jsonLineOf(row, ctx.columnTypes);
      g.push({ line, row, bytes: Buffer.byteLength(line, 'utf8') + 1 });
    }
    const objects: Array<{ entry: SinkLogObject; body: string | Uint8Array }> = [];
    for (const part of sortedPartitions(groups.keys())) {
      const g = groups.get(part)!;
      if (!ctx.ordered) g.sort(byLine);
      let from = 0;
      let bytes = 0;
      for (let i = 0; i < g.length; i++) {
        if (i > from && (i - from >= this.maxRowsPerObject || bytes + g[i].bytes > this.maxBytesPerObject)) {
          objects.push(this.object(batchId, objects.length, part, g.slice(from, i), ctx));
          from = i;
          bytes = 0;
        }
        bytes += g[i].bytes;
      }
      if (g.length > from) objects.push(this.object(batchId, objects.length, part, g.slice(from), ctx));
    }
    let written = 0;
    await mapLimit(objects, this.maxConcurrency, async (o) => {
      await this.putObject(batchId, o);
      ctx.onPieceWritten?.(written++);
    });
    await this.putLog(
      batchId,
      ctx,
      rows.length,
      objects.map((o) => o.entry),
    );
  }

  /**
   * A stateless batch as the executor streams it (Sink.addBatchChunks): each partition's rows
   * gather in one open object, written as soon as it holds maxRowsPerObject rows (numbered in the
   * order they fill, which a replay repeats: it yields the same rows in the same order); at the
   * end the partly filled ones, partitions in sorted order; then the log entry. Memory follows
   * the open objects (one per partition value seen, at most maxRowsPerObject rows each), not the
   * batch. Rows are still sorted within an object, so the objects are those addBatch would write
   * when one partition's rows fit in one object.
   *
   *     chunk 0 ─▶ [date=a: 100000 rows] PUT part-…-00000 ─▶ chunk 1 ─▶ ... ─▶ PUT the open
   *     objects (date=a, date=b) ─▶ PUT _sink_log/…   ◀─ committed here
   */
  async addBatchChunks(batchId: number, chunks: AsyncIterable<OutputRow[]>, ctx: SinkContext): Promise<void> {
    this.checkBatch(batchId, ctx);
    const open = new Map<string | null, ObjectLine[]>();
    const openBytes = new Map<string | null, number>();
    const entries: SinkLogObject[] = [];
    let rows = 0;
    const write = async (part: string | null, lines: ObjectLine[]) => {
      const o = this.object(batchId, entries.length, part, lines, ctx);
      entries.push(o.entry);
      await this.putObject(batchId, o);
      ctx.onPieceWritten?.(entries.length - 1);
    };
    for await (const chunk of chunks) {
      for (const row of chunk) {
        rows++;
        const part = this.partitionBy === null ? null : this.partitionValue(row);
        const line = jsonLineOf(row, ctx.columnTypes);
        const bytes = Buffer.byteLength(line, 'utf8') + 1;
        let g = open.get(part);
        // the open object is written first if this row would take it past maxBytesPerObject
        if (g && (openBytes.get(part) ?? 0) + bytes > this.maxBytesPerObject) {
          open.delete(part);
          await write(part, g);
          g = undefined;
        }
        if (!g) {
          open.set(part, (g = []));
          openBytes.set(part, 0);
        }
        g.push({ line, row, bytes });
        openBytes.set(part, openBytes.get(part)! + bytes);
        if (g.length >= this.maxRowsPerObject || openBytes.get(part)! >= this.maxBytesPerObject) {
          open.delete(part);
          await write(part, g);
        }
      }
    }
    for (const part of sortedPartitions(open.keys())) await write(part, open.get(part)!);
    await this.putLog(batchId, ctx, rows, entries);
  }

  /** The rows no attempt could write (see the header): too long a key, an unreadable partition timestamp, what `rowRefusal` refuses. */
  check(batchId: number, rows: readonly OutputRow[], ctx: SinkContext): RefusedRow[] {
    this.checkBatch(batchId, ctx);
    // The key less the partition value, with the longest object number a batch has in practice (5 digits)
    const fixed =
      this.partitionBy === null ? 0 : Buffer.byteLength(`${this.root}${this.folderName()}=/part-${paddedBatchId(batchId)}-00000${this.extension}`, 'utf8');
    const refused: RefusedRow[] = [];
    for (let index = 0; index < rows.length; index++) {
      const reason = this.refusal(rows[index], fixed, ctx);
      if (reason !== null) refused.push({ index, reason });
    }
    return refused;
  }

  private refusal(row: OutputRow, fixedKeyBytes: number, ctx: SinkContext): string | null {
    if (this.partitionBy !== null) {
      let part: string | null;
      try {
        part = this.partitionValue(row);
      } catch (e) {
        if (e instanceof InvalidOptionError) return e.message;
        throw e;
      }
      const bytes = fixedKeyBytes + Buffer.byteLength(escapePartition(part), 'utf8');
      if (bytes > S3_KEY_MAX_BYTES) {
        return (
          `${this.who}: the ${this.partitionBy} value ${JSON.stringify(part).slice(0, 80)}… makes the key of its object ${bytes} bytes long under ${this.description}, ` +
          `and S3 keys hold at most ${S3_KEY_MAX_BYTES} bytes of UTF-8 (KeyTooLongError): partition by a shorter column (or a prefix or hash of it), or shorten the sink's prefix`
        );
      }
    }
    return this.rowRefusal(row, ctx);
  }

  /** The output column types the executor passes (SinkContext.columnTypes), checked for every column: a typed format needs them. */
  protected columnTypesOf(ctx: SinkContext): Readonly<Record<string, OutputColumnType>> {
    const types = ctx.columnTypes;
    const missing = types ? ctx.columns.filter((c) => types[c] === undefined) : ctx.columns;
    if (!types || missing.length > 0) {
      throw new InvalidOptionError(
        `${this.who} needs the type of every output column of query ${ctx.queryName} (SinkContext.columnTypes), and ${missing.join(', ')} has none: run it through MicroBatchExecutor, which passes them, or pass columnTypes with the context`,
      );
    }
    return types;
  }

  /** Why the encoding could never write `row` (null: it can); deterministic. */
  protected rowRefusal(_row: OutputRow, _ctx: SinkContext): string | null {
    return null;
  }

  /** What a batch's write needs of the query, checked before any write. */
  private checkBatch(batchId: number, ctx: SinkContext): void {
    paddedBatchId(batchId);
    if (this.partitionBy !== null) {
      const top = this.partitionBy.split('.')[0];
      if (!ctx.columns.includes(top)) {
        throw new InvalidOptionError(
          `${this.who} partitionBy ${JSON.stringify(this.partitionBy)} names no output column of query ${ctx.queryName} (columns: ${ctx.columns.join(', ')}): partition by one of them`,
        );
      }
    }
    this.checkContext(ctx);
  }

  /** Object `n` of a batch: `lines` (one partition's) sorted by their JSON text (unless the query sorts its rows), encoded. */
  private object(batchId: number, n: number, part: string | null, lines: ObjectLine[], ctx: SinkContext): { entry: SinkLogObject; body: string | Uint8Array } {
    if (!ctx.ordered) lines.sort(byLine);
    const body = this.encode({ rows: lines.map((x) => x.row), lines: lines.map((x) => x.line) }, batchId, ctx);
    const name = `part-${paddedBatchId(batchId)}-${String(n).padStart(5, '0')}${this.extension}`;
    // A null partition value goes to the folder Hive names for it, not the prefix's root (where
    // a partitioned table's readers never look).
    const key = this.partitionBy === null ? name : `${this.folderName()}=${escapePartition(part)}/${name}`;
    const bytes = typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.byteLength;
    return { entry: { key, partition: part, rows: lines.length, bytes }, body };
  }

  private async putObject(batchId: number, o: { entry: SinkLogObject; body: string | Uint8Array }): Promise<void> {
    const what = `object ${o.entry.key} of batch ${batchId},`;
    if (typeof o.body === 'string') await this.putOnce(o.entry.key, o.body, this.contentType, what);
    else await this.putBytesOnce(o.entry.key, o.body, this.contentType, what);
  }

  /** The commit point of the batch: only now do log readers see its objects. */
  private async putLog(batchId: number, ctx: SinkContext, rows: number, objects: SinkLogObject[]): Promise<void> {
    const entry: SinkLogEntry = { version: 1, batchId, queryId: ctx.queryId, rows, objects };
    await this.putOnce(this.logKey(batchId).slice(this.root.length), JSON.stringify(entry), 'application/json', `the sink log entry of batch ${batchId},`);
  }

  /** Batch IDs with a log entry, ascending. */
  committedBatches(): Promise<number[]> {
    return this.listBatchIds(`${SINK_LOG_DIR}/`, /^(\d{10})$/);
  }

  /** The log entry of a batch, or null when the batch has not committed to this sink. */
  readLog(batchId: number): Promise<SinkLogEntry | null> {
    const key = this.logKey(batchId);
    return this.s3.getJson<SinkLogEntry>(
      this.bucket,
      key,
      (e) =>
        new SluiceError(
          `sink log entry s3://${this.bucket}/${key} is not JSON (${e.message}): it was not written by sluice or is damaged, so restore it or replay the batch`,
          { cause: e },
        ),
    );
  }

  protected logKey(batchId: number): string {
    return `${this.root}${SINK_LOG_DIR}/${paddedBatchId(batchId)}`;
  }

  /** The folder name of the partition column: `window.start` → `window_start`. */
  protected folderName(): string {
    return partitionFolderName(this.partitionBy!);
  }

  private partitionValue(row: OutputRow): string | null {
    const [col, field] = this.partitionBy!.split('.');
    let v: Json | undefined = row[col];
    if (field !== undefined) v = v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, Json>)[field] : undefined;
    if (v === null || v === undefined) return null;
    if (this.granularity === 'value') return typeof v === 'string' ? v : JSON.stringify(v);
    // an output row's timestamp is ISO text; a number is epoch µs (a TIMESTAMP value)
    const us = typeof v === 'number' ? (Number.isSafeInteger(v) ? v : null) : typeof v === 'string' ? parseTimestamp(v) : null;
    if (us === null) {
      throw new InvalidOptionError(
        `${this.who} partitions by the ${this.granularity} of ${this.partitionBy}, but a row holds ${JSON.stringify(v)}, which is not a timestamp: use partitionGranularity "value" or partition by a timestamp column`,
      );
    }
    const iso = formatTimestamp(us);
    return this.granularity === 'day' ? iso.slice(0, 10) : iso.slice(0, 13);
  }
}

/** A row with its JSON text, and that text's bytes in an object (with its newline). */
interface ObjectLine {
  readonly line: string;
  readonly row: OutputRow;
  readonly bytes: number;
}

/** Partition values in the order their objects are numbered: null first, then ascending. */
/** The order of a sink's lines by their JSON text. */
function byLine(a: ObjectLine, b: ObjectLine): number {
  return a.line < b.line ? -1 : a.line > b.line ? 1 : 0;
}

function sortedPartitions(parts: Iterable<string | null>): Array<string | null> {
  return [...parts].sort((a, b) => (a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1));
}

/** The folder name a partition column gets in keys: `window.start` → `window_start`. */
function partitionFolderName(partitionBy: string): string {
  return partitionBy.replace('.', '_');
}

function positiveInteger(who: string, v: number | undefined, fallback: number, name: string): number {
  if (v === undefined) return fallback;
  if (!Number.isSafeInteger(v) || v <= 0) throw new InvalidOptionError(`${who} ${name} (${v}) must be a positive integer: leave it out for ${fallback}`);
  return v;
}

/** Hive-style: keep [A-Za-z0-9._-], percent-encode the rest (so "/" and "=" never split a key). */
export function escapePartition(value: string | null): string {
  if (value === null) return NULL_PARTITION;
  let out = '';
  for (const ch of value) {
    if (/[A-Za-z0-9._-]/.test(ch)) out += ch;
    else for (const b of Buffer.from(ch, 'utf8')) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out === '' ? NULL_PARTITION : out;
}
