/**
 * The rows a sink refuses (Sink.check) become dead letters instead of failing every replay of
 * their batch: the committer (lib/engine/run/committer.ts) passes the batch's rows, or its chunks
 * as they stream, through here before the sink, and writes what was refused to the dead letters
 * (kind 'unwritable') with the reason.
 *
 *     rows ─▶ sink.check(N, rows) ─▶ refused: { row, reason, batchId, sink } ─▶ dead letters
 *                                 └▶ the rest ─▶ sink.addBatch(N, rest)
 *     chunk i ─▶ sink.check(N, chunk) ─▶ the rest of chunk i (left out when empty) ─▶ addBatchChunks
 *
 * A sink's verdict depends on the row alone (Sink.check), so a replay refuses the same rows and
 * hands the sink the same rest, in the same order: the sinks that name what they write by position
 * (the DynamoDB sink's keyless rows, the S3 file sinks' objects) see the same positions.
 */
import { SluiceError } from './errors';
import type { Json, OutputRow, Sink, SinkContext } from './ports';

/** The dead-letter record of a refused row. */
function unwritable(sink: Sink, batchId: number, row: OutputRow, reason: string): Json {
  return { row, reason, batchId, sink: sink.description };
}

/** `rows` less those the sink refuses; the refused ones' dead-letter records are pushed on `refused`. */
export async function writableRows(sink: Sink, batchId: number, rows: OutputRow[], ctx: SinkContext, refused: Json[]): Promise<OutputRow[]> {
  if (!sink.check || rows.length === 0) return rows;
  const verdicts = await sink.check(batchId, rows, ctx);
  if (verdicts.length === 0) return rows;
  const out = new Set<number>();
  for (const v of verdicts) {
    if (!Number.isInteger(v.index) || v.index < 0 || v.index >= rows.length || out.has(v.index)) {
      throw new SluiceError(
        `sink ${sink.description} refused row ${v.index} of a check of ${rows.length} rows: Sink.check must name each refused row once, by its index`,
        { retriable: false },
      );
    }
    out.add(v.index);
  }
  for (const v of [...verdicts].sort((a, b) => a.index - b.index)) refused.push(unwritable(sink, batchId, rows[v.index], v.reason));
  return rows.filter((_, i) => !out.has(i));
}

/** The chunks less the rows the sink refuses (chunks left empty are left out), checked as they are pulled; the chunks themselves for a sink without check. */
export function writableChunks(sink: Sink, batchId: number, chunks: AsyncIterable<OutputRow[]>, ctx: SinkContext, refused: Json[]): AsyncIterable<OutputRow[]> {
  return sink.check ? checked(sink, batchId, chunks, ctx, refused) : chunks;
}

async function* checked(sink: Sink, batchId: number, chunks: AsyncIterable<OutputRow[]>, ctx: SinkContext, refused: Json[]): AsyncGenerator<OutputRow[]> {
  for await (const chunk of chunks) {
    const rest = await writableRows(sink, batchId, chunk, ctx, refused);
    if (rest.length > 0) yield rest;
  }
}
