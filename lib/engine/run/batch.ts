/**
 * One batch computed, with no effect: its rows read (chunk by chunk, through the stateless
 * stages), its operators run against the state at version N−1, its output and state changes
 * returned for the committer (committer.ts) to apply. Spark's IncrementalExecution, in effect.
 *
 *   source 0 chunks ─▶ stages ─▶ op0 ─▶ stages ─▶ op1 ─▶ ... ─▶ post stages ─▶ output rows
 *   source k chunks ─▶ its stages ─▶ its operators ─┘ (a stream-stream join's right side)
 */
import type { Accumulator, OperatorOutput } from '../operators/operator';
import { batchMeta } from '../operators/batch';
import type { DeadLetter, Json, OffsetEntry, OutputRow, ReadOptions, ReadResult, Row, Source, StateStore } from '../ports';
import { type RowErrorHandler, toOutputRow } from '../rows';
import { MaxEventTimes, operatorInputWatermarks } from '../watermark';
import { watermarksOf } from './position';
import type { QueryRuntime } from './runtime';
import type { QueryPlan } from '../plan/types';

export type { Accumulator };

/** What reading a batch gathered. */
export interface BatchRead {
  numInputRows: number;
  /** Rows read from each source (index as in OffsetEntry.offsets). */
  readonly perSource: number[];
  bytes: number;
  /** Bytes read from each source (as the source counts them: stored bytes of the files, record data). */
  readonly perSourceBytes: number[];
  /** Files read from each source that reads files (ReadResult.files), absent for the others. */
  readonly perSourceFiles: number[];
  /** Dead letters from each source (records it could not turn into rows). */
  readonly perSourceDeadLetters: number[];
  readonly deadLetters: DeadLetter[];
  readonly maxEventTimes: MaxEventTimes;
  /** A stateless query's rows after the stages (a stateful one feeds its operator instead). */
  readonly rows: Row[];
}

/** What the batch's operators produced: the last stage's rows, and each operator's own output. */
export interface ChainOutput {
  readonly rows: Row[];
  readonly perOperator: OperatorOutput[];
}

/** A computed batch: what it read, its output rows, each operator's output (state changes, late rows). */
export interface ComputedBatch {
  readonly read: BatchRead;
  readonly output: OutputRow[];
  readonly perOperator: OperatorOutput[];
}

export function emptyRead(): BatchRead {
  return {
    numInputRows: 0,
    perSource: [],
    bytes: 0,
    perSourceBytes: [],
    perSourceFiles: [],
    perSourceDeadLetters: [],
    deadLetters: [],
    maxEventTimes: new MaxEventTimes(),
    rows: [],
  };
}

/** The source's chunks, or its whole read as one chunk when it has no chunked read. */
async function* readChunks(source: Source, batchId: number, start: Json | null, end: Json, options: ReadOptions): AsyncIterable<ReadResult> {
  if (source.readChunks) yield* source.readChunks(batchId, start, end, options);
  else yield await source.read(batchId, start, end, options);
}

/** Operator i's batch: its id and its input watermarks, derived from the batch's. */
export function operatorBatch(rt: QueryRuntime, entry: OffsetEntry, i: number) {
  const wms = operatorInputWatermarks(
    watermarksOf(entry),
    rt.operators.map((o) => o.chained.watermarkOffsetMs),
  )[i];
  const meta = batchMeta(entry.batchId, wms.batchWatermarkMs, wms.lateWatermarkMs, entry.processingTimeMs ?? entry.batchTimestampMs);
  return rt.runIds === null ? meta : { ...meta, ...rt.runIds };
}

/**
 * Each operator's accumulator for batch N: it evicts with its input watermark derived from the
 * batch's and drops late rows with the one derived from the previous batch's. With `io`, an
 * operator may read `state` (version N−1) as it takes rows, and a row it refuses (an aggregate's
 * overflow) is a dead letter of `read`, counted with the source whose rows it takes.
 */
export function beginOperators(
  rt: QueryRuntime,
  entry: OffsetEntry,
  io?: { state: StateStore; read: BatchRead },
  partitions?: readonly number[],
): Accumulator[] {
  return rt.operators.map((o, i) => {
    const meta = operatorBatch(rt, entry, i);
    return o.op.begin(partitions ? { ...meta, partitions } : meta, io && { state: io.state, onRowError: rowErrorsOf(io.read, operatorSource(rt, i)) });
  });
}

/** The source whose rows operator i takes as they are read (the first of its pipeline), or undefined (it takes an operator's output). */
function operatorSource(rt: QueryRuntime, i: number): number | undefined {
  const input = rt.operators[i].chained.input;
  if (rt.operators.findIndex((o) => o.chained.input === input) !== i) return undefined;
  return input === null ? 0 : input + 1;
}

/** Index of the first operator of the query's own pipeline (it takes source 0's rows), or -1. */
export function firstOperator(rt: QueryRuntime): number {
  return rt.operators.findIndex((o) => o.chained.input === null);
}

/**
 * The whole batch in one process: read every source, run every operator against `state` (at
 * version N−1), the output rows as the sink takes them. A no-data batch reads nothing.
 */
export async function computeBatch(rt: QueryRuntime, entry: OffsetEntry, noData: boolean, state: StateStore): Promise<ComputedBatch> {
  const read = emptyRead();
  const accs = beginOperators(rt, entry, { state, read });
  const first = firstOperator(rt);
  if (!noData) await readBatch(rt, entry, first >= 0 ? accs[first] : null, read);
  const result: ChainOutput = first >= 0 ? await runOperators(rt, accs, entry, read, state) : { rows: read.rows, perOperator: [] };
  return { read, output: result.rows.map((r) => toOutputRow(r, rt.outColumns)), perOperator: result.perOperator };
}

/**
 * Reads the batch chunk by chunk, running the stateless stages and feeding the operator's
 * in-memory aggregate as it goes: memory follows the batch's distinct keys, not its rows.
 */
async function readBatch(rt: QueryRuntime, entry: OffsetEntry, acc: Accumulator | null, read: BatchRead): Promise<void> {
  for (const sourceIndex of streamSources(rt.plan)) {
    for await (const rows of stagedChunks(rt, entry, read, sourceIndex)) {
      if (acc) await acc.add(rows);
      else for (const r of rows) read.rows.push(r);
    }
  }
}

/**
 * The sources whose rows make the query's own stream, in the order a batch reads them: the first
 * source, then each union's other stream (plan.inputs with unionAt; source k + 1 is inputs[k]).
 */
function streamSources(plan: QueryPlan): number[] {
  const out = [0];
  (plan.inputs ?? []).forEach((input, k) => {
    if (input.unionAt !== undefined) out.push(k + 1);
  });
  return out;
}

/** The stateless stages source `sourceIndex`'s rows go through before the first operator (a union's stream: its own, then the query's from where it joins). */
function sourceStages(plan: QueryPlan, sourceIndex: number): QueryPlan['stages'] {
  if (sourceIndex === 0) return plan.stages;
  const input = plan.inputs![sourceIndex - 1];
  return input.unionAt === undefined ? input.stages : [...input.stages, ...plan.stages.slice(input.unionAt)];
}

/**
 * A source's chunks after its stateless stages, noting in `read` what they held (source 0: the
 * query's first; source k + 1: plan.inputs[k]). A source whose offsets did not move is not read.
 * `split`: only that read task's part of source 0 (a partitioned run).
 */
export async function* stagedChunks(
  rt: QueryRuntime,
  entry: OffsetEntry,
  read: BatchRead,
  sourceIndex = 0,
  split?: ReadOptions['split'],
): AsyncGenerator<Row[]> {
  const start = entry.startOffsets[sourceIndex] ?? null;
  const end = entry.offsets[sourceIndex] ?? null;
  if (end === null || JSON.stringify(start) === JSON.stringify(end)) return;
  const stages = sourceStages(rt.plan, sourceIndex);
  const options: ReadOptions = sourceIndex === 0 ? { ...rt.readOptions, ...(split ? { split } : {}) } : {};
  for await (const chunk of readChunks(rt.sources[sourceIndex], entry.batchId, start, end, options)) {
    read.numInputRows += chunk.rows.length;
    read.perSource[sourceIndex] = (read.perSource[sourceIndex] ?? 0) + chunk.rows.length;
    read.bytes += chunk.bytes;
    read.perSourceBytes[sourceIndex] = (read.perSourceBytes[sourceIndex] ?? 0) + chunk.bytes;
    if (chunk.files) read.perSourceFiles[sourceIndex] = (read.perSourceFiles[sourceIndex] ?? 0) + chunk.files;
    read.perSourceDeadLetters[sourceIndex] = (read.perSourceDeadLetters[sourceIndex] ?? 0) + chunk.deadLetters.length;
    for (const d of chunk.deadLetters) read.deadLetters.push(d);
    const staged = await rt.runStages(stages, chunk.rows, rowErrorsOf(read, sourceIndex), chunk.file);
    read.maxEventTimes.observe(staged.maxEventTime, staged.eventTimes);
    yield staged.rows;
  }
}

/**
 * Where the stages' row errors go (FORMAT-3 departure 2): a row a stage cannot evaluate is a dead
 * letter with Spark's error, not a failed batch. `sourceIndex`: the source whose read it counts
 * with; absent for the stages after an operator.
 */
export function rowErrorsOf(read: BatchRead, sourceIndex?: number): RowErrorHandler {
  return (row, reason) => {
    if (sourceIndex !== undefined) read.perSourceDeadLetters[sourceIndex] = (read.perSourceDeadLetters[sourceIndex] ?? 0) + 1;
    read.deadLetters.push({ source: {}, raw: rowText(row), reason });
  };
}

/** A row as the text of a dead letter: JSON, a BIGINT beyond 2^53 − 1 as its digits. */
function rowText(row: Row): string {
  return JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
}

/**
 * A stateless batch's output, lazily: each source chunk through the stages and the post stages,
 * read only when the consumer asks for the next (the sink's addBatchChunks), so memory follows
 * one chunk. The chunks (empty ones left out) are the same on a replay: same offsets, same order.
 * `read` is filled as the chunks are taken; `collect` keeps the output rows in read.rows.
 */
export async function* statelessOutput(
  rt: QueryRuntime,
  entry: OffsetEntry,
  read: BatchRead & { numOutputRows: number },
  collect: boolean,
): AsyncGenerator<OutputRow[]> {
  for (const sourceIndex of streamSources(rt.plan)) {
    for await (const rows of stagedChunks(rt, entry, read, sourceIndex)) {
      const out = (await rt.runStages(rt.plan.post, rows, rowErrorsOf(read))).rows.map((r) => toOutputRow(r, rt.outColumns));
      read.numOutputRows += out.length;
      if (collect) for (const r of out) read.rows.push(r);
      if (out.length > 0) yield out;
    }
  }
}

/**
 * The batch's operators: the first of the query's pipeline has taken the batch's rows as they
 * were read; each next one takes what the one before emitted, after the stateless stages between
 * them; a stream-stream join also takes its input's rows, after that input's own pipeline. Each
 * reads its state at version N−1 (nothing is committed before all of them finished).
 */
export async function runOperators(rt: QueryRuntime, accs: Accumulator[], entry: OffsetEntry, read: BatchRead, state: StateStore): Promise<ChainOutput> {
  const perOperator: OperatorOutput[] = new Array(accs.length);
  const rows = await finishPipeline(rt, null, accs, entry, read, perOperator, state);
  return { rows, perOperator };
}

/** The operators of one pipeline (the query's: null, or an input's) in order; their last stage's rows. */
async function finishPipeline(
  rt: QueryRuntime,
  input: number | null,
  accs: Accumulator[],
  entry: OffsetEntry,
  read: BatchRead,
  perOperator: OperatorOutput[],
  state: StateStore,
): Promise<Row[]> {
  let rows: Row[] = [];
  let fed = true;
  for (let i = 0; i < rt.operators.length; i++) {
    const o = rt.operators[i];
    if (o.chained.input !== input) continue;
    if (!fed && rows.length) await accs[i].add(rows);
    fed = false;
    const spec = o.chained.spec;
    if (spec.kind === 'streamJoin') accs[i].addRight!(await inputRows(rt, spec.input, accs, entry, read, perOperator, state));
    const out = await accs[i].finish(state);
    perOperator[i] = out;
    rows = (await rt.runStages(o.chained.post, out.rows, rowErrorsOf(read))).rows;
  }
  return rows;
}

/** Input k's rows of the batch (plan.inputs[k]), after its own pipeline: read, its stages, its operators. */
async function inputRows(
  rt: QueryRuntime,
  k: number,
  accs: Accumulator[],
  entry: OffsetEntry,
  read: BatchRead,
  perOperator: OperatorOutput[],
  state: StateStore,
): Promise<Row[]> {
  const first = rt.operators.findIndex((o) => o.chained.input === k);
  const rows: Row[] = [];
  for await (const chunk of stagedChunks(rt, entry, read, k + 1)) {
    if (first >= 0) await accs[first].add(chunk);
    else for (const r of chunk) rows.push(r);
  }
  return first >= 0 ? finishPipeline(rt, k, accs, entry, read, perOperator, state) : rows;
}
