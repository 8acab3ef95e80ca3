/**
 * The harness the differential property tests share (test/unit/aggregation-, window-, join-,
 * chain- and sql-builder-differential.test.ts): event times as the input files write them and as
 * output rows carry them, a batch's output rows as canonical text, what each side (the engine on
 * the in-memory ports, and the test's model or the query's other form) reports per batch and per
 * run, read off an executor's RunReport, and the aggregations over v that the aggregation and
 * window tests build. Each test's model of Spark's rules, its scenarios and its input files stay
 * in its own file.
 */
import type { OutputRow } from '../../lib/engine/ports';
import type { CheckpointStore } from '../../lib/engine/ports/checkpoint-store';
import { type AggBuilder, avg, count, max, min, sum } from '../../lib/engine/query/functions';
import type { BatchReport, RunReport } from '../../lib/engine/run/types';

// ---------------------------------------------------------------------------------------------
// Text in and out
// ---------------------------------------------------------------------------------------------

/** floor(a / b), b > 0. */
export function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n ? q - 1n : q;
}

/** An instant's ISO 8601 text to the millisecond, and its microseconds beyond. */
function isoParts(us: bigint): { iso: string; micros: string } {
  const ms = floorDiv(us, 1000n);
  return { iso: new Date(Number(ms)).toISOString(), micros: String(us - ms * 1000n).padStart(3, '0') };
}

/** An event time (epoch µs) as the input file writes it: "YYYY-MM-DD HH:MM:SS.ffffff" (UTC). */
export function inputTime(us: bigint): string {
  const { iso, micros } = isoParts(us);
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}${micros}`;
}

/** An instant (epoch µs) as output rows carry it: ISO 8601 with milliseconds, or microseconds when there are some; null stays null. */
export function outputTime(us: bigint): string;
export function outputTime(us: bigint | null): string | null;
export function outputTime(us: bigint | null): string | null {
  if (us === null) return null;
  const { iso, micros } = isoParts(us);
  return micros === '000' ? iso : `${iso.slice(0, 23)}${micros}Z`;
}

/**
 * Whether a row's canonical text tells -0.0 from 0.0 (`zeroSign`; by default not: the state
 * stores keep no sign of zero, and the JSON sinks write both as 0).
 */
interface CanonicalOptions {
  readonly zeroSign?: boolean;
}

/** A value's canonical text: object keys sorted, numbers by String (-0 is 0 unless zeroSign). */
function canonical(v: unknown, zeroSign: boolean): string {
  if (typeof v === 'number') return zeroSign && Object.is(v, -0) ? '-0' : String(v);
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'undefined';
  if (Array.isArray(v)) return `[${v.map((x) => canonical(x, zeroSign)).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical(o[k], zeroSign)}`)
    .join(',')}}`;
}

/** Rows as a multiset: each row's canonical text, sorted. */
export function canonicalRows(rows: readonly unknown[], options: CanonicalOptions = {}): string[] {
  return rows.map((r) => canonical(r, options.zeroSign === true)).sort();
}

// ---------------------------------------------------------------------------------------------
// What both sides report
// ---------------------------------------------------------------------------------------------

/** What is compared of a batch. */
export interface BatchSeen {
  batchId: number;
  noData: boolean;
  /** The batch's own (evicting) watermark, ms. */
  watermarkMs: number;
  /** Output rows, canonical, sorted. */
  rows: string[];
  droppedByWatermark: number;
  deadLetters: number;
  stateRows: number;
}

/** What is compared of a run: its batches (of the test's shape), the watermark after it. */
export interface RunSeen<B = BatchSeen> {
  batches: B[];
  watermarkMs: number;
}

/**
 * A run as the engine reports it: each batch's rows (its collected ones, or `rowsOf` it, e.g. what
 * the sink holds for it), watermark, rows dropped as late, dead letters and state rows.
 */
export function seenOfRun(r: RunReport, options: CanonicalOptions & { readonly rowsOf?: (b: BatchReport) => readonly OutputRow[] } = {}): RunSeen {
  return {
    watermarkMs: r.watermarkMs,
    batches: r.batches.map((b) => ({
      batchId: b.batchId,
      noData: b.noData,
      watermarkMs: b.batchWatermarkMs,
      rows: canonicalRows(options.rowsOf?.(b) ?? b.rows, options),
      droppedByWatermark: b.droppedByWatermark,
      deadLetters: b.deadLetters,
      stateRows: b.stateRows,
    })),
  };
}

/** What is durable about a batch: the sink's rows, the commit log's watermark and state rows. */
export interface DurableBatch {
  batchId: number;
  watermarkMs: number;
  rows: string[];
  stateRows: number | undefined;
}

/** Every committed batch as the checkpoint's commit log and the sink hold it (what a crash cannot take back). */
export async function durableBatches(
  checkpoint: Pick<CheckpointStore, 'head' | 'readCommit'>,
  sink: { readonly batches: ReadonlyMap<number, readonly OutputRow[]> },
): Promise<DurableBatch[]> {
  const durable: DurableBatch[] = [];
  const head = await checkpoint.head();
  for (let id = 0; id <= head.latestCommitBatch; id++) {
    const commit = await checkpoint.readCommit(id);
    durable.push({
      batchId: id,
      watermarkMs: commit?.batchWatermarkMs ?? -1,
      rows: canonicalRows(sink.batches.get(id) ?? []),
      stateRows: commit?.stateRows,
    });
  }
  return durable;
}

// ---------------------------------------------------------------------------------------------
// Aggregations
// ---------------------------------------------------------------------------------------------

export type AggName = 'countAll' | 'count' | 'sum' | 'min' | 'max' | 'avg';

/** The output column of each aggregation. */
export const AS: Record<AggName, string> = { countAll: 'n', count: 'n_v', sum: 'sum_v', min: 'min_v', max: 'max_v', avg: 'avg_v' };

/** The aggregations as the builder API writes them: count(*), and count, sum, min, max, avg of v. */
export function aggregationsOfV(names: readonly AggName[]): AggBuilder[] {
  return names.map((a) => {
    switch (a) {
      case 'countAll':
        return count().as(AS[a]);
      case 'count':
        return count('v').as(AS[a]);
      case 'sum':
        return sum('v').as(AS[a]);
      case 'min':
        return min('v').as(AS[a]);
      case 'max':
        return max('v').as(AS[a]);
      case 'avg':
        return avg('v').as(AS[a]);
    }
  });
}
