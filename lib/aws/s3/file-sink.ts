/**
 * The S3 file sink: each batch's rows as JSON-lines objects with deterministic keys, optionally
 * partitioned by a column, plus a sink log that lists the committed objects of each batch. The
 * keys, the log and the exactly-once rules are the logged sinks' (logged-sink.ts):
 *
 *     <prefix>/<column>=<value>/part-<batchId 10>-<n 5>.jsonl    the rows, sorted within a partition
 *     <prefix>/part-<batchId 10>-<n 5>.jsonl                       (without partitionBy)
 *     <prefix>/_sink_log/<batchId 10>                             {"objects": [...]}: written last
 *
 * Readers use `readCommitted()` / `readBatch(N)`: they list `_sink_log/` and read only the
 * objects it names, so they never see a half-written batch.
 */
import { SluiceError } from '../../engine/errors';
import type { OutputColumnType, OutputRow } from '../../engine/ports';
import { mapLimit } from '../request/concurrency';
import { fromJsonLines } from './batch-files';
import { S3LoggedSink, type ObjectRows, type S3LoggedSinkOptions } from './logged-sink';

export { escapePartition, type PartitionGranularity } from './logged-sink';

export type S3FileSinkOptions = S3LoggedSinkOptions;

export class S3FileSink extends S3LoggedSink {
  protected readonly extension = '.jsonl';
  protected readonly contentType = 'application/x-ndjson';

  constructor(opts: S3FileSinkOptions) {
    super(opts, 'S3FileSink');
  }

  protected encode(part: ObjectRows): string {
    return `${part.lines.join('\n')}\n`;
  }

  /**
   * The rows batch `batchId` committed (possibly none), or null when it has not committed. With
   * the query's output column types, typed as they were written (S3JsonSink.readBatch).
   */
  async readBatch(batchId: number, types?: Readonly<Record<string, OutputColumnType>>): Promise<OutputRow[] | null> {
    const entry = await this.readLog(batchId);
    if (entry === null) return null;
    const bodies = await mapLimit(entry.objects, this.maxConcurrency, async (o) => {
      const key = this.root + o.key;
      const text = await this.s3.getText(this.bucket, key);
      if (text === null) {
        throw new SluiceError(
          `s3://${this.bucket}/${key} is listed by the sink log of batch ${batchId} but was deleted after the commit: restore it, or delete the log entry and replay the batch from its checkpoint`,
        );
      }
      return fromJsonLines(text, `s3://${this.bucket}/${key}`, types) as OutputRow[];
    });
    return bodies.flat();
  }

  /** Every committed row, batch by batch (in batch order). Objects no log entry names are ignored. */
  async readCommitted(types?: Readonly<Record<string, OutputColumnType>>): Promise<OutputRow[]> {
    const out: OutputRow[] = [];
    for (const id of await this.committedBatches()) for (const r of (await this.readBatch(id, types)) ?? []) out.push(r);
    return out;
  }
}
