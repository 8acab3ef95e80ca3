/** The Sink twin (the twins' common rules: twins.ts). */
import { SluiceError } from '../errors';
import type { OutputRow, Sink, SinkContext } from '../ports';
import { copy } from './twins';

/** One durable write of the sink twin: piece `piece` of batch `batchId`. */
export interface SinkWrite {
  readonly batchId: number;
  readonly piece: number;
  readonly rows: OutputRow[];
}

/** A chunk of a streamed batch as the sink twin received it (addBatchChunks): chunk `index` of `batchId`. */
export interface SinkChunk {
  readonly batchId: number;
  readonly index: number;
  readonly rows: OutputRow[];
}

export interface InMemorySinkOptions {
  /** Rows per durable piece of a batch's write (the DynamoDB sink's chunk is 98). @default 98 */
  readonly pieceRows?: number;
}

/**
 * A sink that writes each batch as the DynamoDB and S3 file sinks do: its rows sorted (so which
 * rows fall in piece i depends only on the set of rows), in pieces of `pieceRows`, each piece
 * durable on its own, `onPieceWritten(i)` told after each. A replay rewrites its batch's pieces
 * (deterministic keys), so `batches` holds what a reader sees; `writes` keeps every write ever
 * made, so a batch written twice, or written twice with different content, is visible.
 *
 * A streamed batch (addBatchChunks, a stateless query) is written as the DynamoDB sink writes it:
 * rows in the order they come (a replay yields the same chunks), a piece written as soon as
 * `pieceRows` rows are there (a piece may span chunks), the rest at the end. Each chunk is
 * recorded in `received` when it arrives, so a test sees what the sink had before the source
 * yielded its next chunk. Strict as the DynamoDB sink's markers: an empty chunk (the executor
 * leaves them out), a replayed piece whose rows differ from the piece stored, or a replay with
 * fewer pieces than stored is a non-retriable SluiceError.
 */
export class InMemorySink implements Sink {
  readonly description = 'memory://sink';
  /** What the sink holds per batch: its pieces as last written, in order. */
  readonly batches = new Map<number, OutputRow[]>();
  /** Every durable write, in order. */
  readonly writes: SinkWrite[] = [];
  /** Every chunk a streamed batch brought (addBatchChunks), in the order received. */
  readonly received: SinkChunk[] = [];
  calls = 0;
  readonly pieceRows: number;
  private readonly pieces = new Map<number, OutputRow[][]>();

  constructor(opts: InMemorySinkOptions = {}) {
    const n = opts.pieceRows ?? 98;
    if (!Number.isInteger(n) || n < 1)
      throw new SluiceError(`InMemorySink pieceRows (${n}) must be a positive integer: the rows per durable piece, e.g. 98 as the DynamoDB sink`);
    this.pieceRows = n;
  }

  async addBatch(batchId: number, rows: OutputRow[], ctx?: SinkContext) {
    this.calls++;
    const sorted = sortedRows(rows);
    let held = this.pieces.get(batchId);
    if (!held) this.pieces.set(batchId, (held = []));
    if (sorted.length === 0) this.batches.set(batchId, held.flat());
    for (let i = 0, piece = 0; i < sorted.length; i += this.pieceRows, piece++) {
      const rowsOfPiece = copy(sorted.slice(i, i + this.pieceRows));
      held[piece] = rowsOfPiece;
      this.writes.push({ batchId, piece, rows: rowsOfPiece });
      this.batches.set(batchId, held.flat());
      ctx?.onPieceWritten?.(piece);
    }
  }

  async addBatchChunks(batchId: number, chunks: AsyncIterable<OutputRow[]>, ctx?: SinkContext) {
    this.calls++;
    let held = this.pieces.get(batchId);
    if (!held) this.pieces.set(batchId, (held = []));
    const stored = held;
    const differs = (what: string) =>
      new SluiceError(`InMemorySink: ${what} of batch ${batchId}: a replay of a streamed batch must yield the same chunks (same offsets, same order)`, {
        retriable: false,
        details: { batchId },
      });
    let piece = 0;
    let pending: OutputRow[] = [];
    const write = () => {
      const before = stored[piece];
      if (before !== undefined && JSON.stringify(before) !== JSON.stringify(pending)) throw differs(`piece ${piece} holds other rows than this replay's`);
      stored[piece] = pending;
      this.writes.push({ batchId, piece, rows: pending });
      this.batches.set(batchId, stored.flat());
      ctx?.onPieceWritten?.(piece);
      piece++;
      pending = [];
    };
    let index = 0;
    for await (const chunk of chunks) {
      if (!Array.isArray(chunk) || chunk.length === 0)
        throw new SluiceError(
          `InMemorySink: chunk ${index} of batch ${batchId} is ${Array.isArray(chunk) ? 'empty' : 'not an array'}: the executor leaves empty chunks out`,
          { retriable: false },
        );
      const rows = copy(chunk);
      this.received.push({ batchId, index: index++, rows });
      for (const r of rows) {
        pending.push(r);
        if (pending.length === this.pieceRows) write();
      }
    }
    if (pending.length > 0) write();
    if (stored.length > piece) throw differs(`${stored.length} pieces are stored, this replay wrote ${piece}`);
    if (piece === 0) this.batches.set(batchId, []);
  }

  /** Pieces written more than once with different rows: a replay that did not repeat itself. */
  conflicts(): Array<{ batchId: number; piece: number }> {
    const first = new Map<string, string>();
    const out: Array<{ batchId: number; piece: number }> = [];
    for (const w of this.writes) {
      const k = `${w.batchId}/${w.piece}`;
      const text = JSON.stringify(w.rows);
      const seen = first.get(k);
      if (seen === undefined) first.set(k, text);
      else if (seen !== text && !out.some((o) => o.batchId === w.batchId && o.piece === w.piece)) out.push({ batchId: w.batchId, piece: w.piece });
    }
    return out;
  }

  /** How many times each batch's piece 0 was written (a batch with no rows writes none). */
  timesWritten(batchId: number): number {
    return this.writes.filter((w) => w.batchId === batchId && w.piece === 0).length;
  }
}

/** Rows in a canonical order: by their JSON with sorted keys. */
function sortedRows(rows: readonly OutputRow[]): OutputRow[] {
  const keyed = rows.map((r) => [stableJson(r), r] as const);
  keyed.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return keyed.map(([, r]) => r);
}

function stableJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  return `{${Object.keys(v as object)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
    .join(',')}}`;
}
