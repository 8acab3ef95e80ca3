/**
 * What the tasks of a partitioned run hand each other through the shuffle store, each with its
 * codec: encoded as state JSON (non-finite numbers kept), decoded with a check of its shape, so a
 * truncated or foreign object fails naming its key instead of surfacing as a wrong batch.
 *
 *   runs/<runId>        RunRecord    the run's lease, its planner state, its batch in flight (deleted when the run ends)
 *   N/plan              BatchTasks   how batch N is split into tasks (the same on every attempt)
 *   N/read/k/data       split k's rows or partial groups for every partition it reaches, one
 *                       section each (rows or partials as below)
 *   N/read/k/index      Sections     where each partition's section is in N/read/k/data; written after it
 *   N/read/k/<p>        rows or partial groups of split k for partition p (an earlier sluice's layout, still read)
 *   N/read/k/out        a stateless batch's output rows of split k
 *   N/read/k/meta       ReadMeta     split k's figures; written last: the read task is done
 *   N/out/p             PartitionOut partition p's output and figures; written after its state commit
 */
import { SluiceError } from '../errors';
import type { DeadLetter, Json, LeaseHandle, OutputRow, Row } from '../ports';
import type { BatchStart, RunState } from '../run/planner';
import { decodeStateJson, encodeStateJson } from '../state-json';

/** The run's record: what its plan tasks share (the planner's state among it). */
export interface RunRecord {
  readonly runId: string;
  readonly lease: LeaseHandle | null;
  readonly startedAtMs: number;
  /** The first batch the run planned: the run's summary covers from there. */
  readonly firstBatch?: number;
  /** The checkpoint's query id, noted at the run's first plan (a processor's QueryInfo in partition tasks). */
  readonly queryId?: string;
  /** What keepStateAlive said at the run's first plan: its commits note it (CommitEntry.stateKeptForGood). */
  readonly stateKeptForGood?: boolean;
  readonly planner: RunState;
  /** The batch in flight, as the planner gave it: its start (for its progress record) and whether it is a replay. */
  readonly batch?: { readonly batchId: number; readonly replay: boolean; readonly start: BatchStart };
}

/** How a batch is split into tasks (N/plan), the same on every attempt of the batch. */
export interface BatchTasks {
  readonly batchId: number;
  /** stateless: read tasks only; partitioned: read and partition tasks; whole: one partition task does everything. */
  readonly mode: 'stateless' | 'partitioned' | 'whole';
  readonly splits: number;
  readonly partitions: number[];
  /** Whether read tasks hand on pre-aggregated groups (the operator's beginPartials) rather than rows. */
  readonly partials?: boolean;
}

/** What a read task hands on (N/read/k/meta). */
export interface ReadMeta {
  readonly numInputRows: number;
  readonly perSource: number[];
  readonly bytes: number;
  /** Per source, as BatchRead's (absent in a record an earlier sluice wrote). */
  readonly perSourceBytes?: number[];
  readonly perSourceFiles?: number[];
  readonly perSourceDeadLetters?: number[];
  readonly deadLetters: DeadLetter[];
  readonly maxEventTimes: Array<[string, number]>;
  readonly stats: { readonly min: number; readonly max: number; readonly count: number; readonly base: number; readonly sum: number };
  /** The partitions it wrote rows (or partial groups) for. */
  readonly partitions: number[];
  /** Rows the first operator dropped as late here (a pre-aggregating read task), and their records for the late-rows output. */
  readonly late?: number;
  readonly lateRecords?: Json[];
  /** The run that wrote it (absent in a record an earlier sluice wrote): only a retry in that run takes it as done. */
  readonly runId?: string;
}

/** Where each partition's section is in a read task's N/read/k/data (N/read/k/index): [partition, start byte, end byte]. */
export type Sections = Array<[number, number, number]>;

/** What a partition task hands on (N/out/p), per operator where it says so. */
export interface PartitionOut {
  /** The run that wrote it (absent in a record an earlier sluice wrote): only a retry in that run takes it as done. */
  readonly runId?: string;
  readonly rows: OutputRow[];
  readonly stateRowsDelta: number[];
  readonly late: number[];
  readonly lateRecords: Json[];
  readonly updated: number[];
  readonly removed: number[];
  readonly bytes: number[];
  readonly commitTimeMs: number[];
  /** What the state store's counters moved by in this task, when it keeps any. */
  readonly storeStats: Record<string, number> | null;
  /** A whole-batch task's read (the batch had no read tasks). */
  readonly read?: ReadMeta;
  /** The dead letters of the task: rows its operators refused (an exact sum's overflow) and row errors of the stages after them (FORMAT-3 departure 2); absent in a record an earlier sluice wrote. */
  readonly deadLetters?: DeadLetter[];
  /** Of those, how many each source's rows gave (rows an operator refused: its first source's). */
  readonly perSourceDeadLetters?: number[];
}

type Check<T> = (v: Json) => v is T & Json;

const isObject = (v: Json): v is { [k: string]: Json } => v !== null && typeof v === 'object' && !Array.isArray(v);
const isNumbers = (v: Json | undefined): boolean => Array.isArray(v) && v.every((n) => typeof n === 'number');
const has = (v: Json, fields: Record<string, 'number' | 'string' | 'boolean' | 'array' | 'object'>): boolean =>
  isObject(v) &&
  Object.entries(fields).every(([k, kind]) => (kind === 'array' ? Array.isArray(v[k]) : kind === 'object' ? isObject(v[k] ?? null) : typeof v[k] === kind));

const isOptionalString = (v: unknown) => v === undefined || typeof v === 'string';
const isRunRecord = ((v) => has(v, { runId: 'string', startedAtMs: 'number', planner: 'object' })) as Check<RunRecord>;
const isBatchTasks = ((v) => has(v, { batchId: 'number', mode: 'string', splits: 'number', partitions: 'array' })) as Check<BatchTasks>;
const isReadMeta = ((v) =>
  has(v, {
    numInputRows: 'number',
    perSource: 'array',
    bytes: 'number',
    deadLetters: 'array',
    maxEventTimes: 'array',
    stats: 'object',
    partitions: 'array',
  }) && isOptionalString((v as { runId?: unknown }).runId)) as Check<ReadMeta>;
const isPartitionOut = ((v) =>
  has(v, { rows: 'array', lateRecords: 'array' }) &&
  isObject(v) &&
  ['stateRowsDelta', 'late', 'updated', 'removed', 'bytes', 'commitTimeMs'].every((k) => isNumbers(v[k])) &&
  isOptionalString(v.runId)) as Check<PartitionOut>;
const isRows = ((v) => Array.isArray(v) && v.every(isObject)) as Check<OutputRow[]>;
const isSections = ((v) =>
  Array.isArray(v) && v.every((s) => Array.isArray(s) && s.length === 3 && s.every((x) => Number.isInteger(x) && (x as number) >= 0))) as Check<Sections>;
const isArray = ((v) => Array.isArray(v)) as Check<Json[]>;

/** A shuffle object's text as a T, or a clear error naming the object. */
function decode<T>(key: string, text: string, check: Check<T>, what: string): T {
  let value: Json;
  try {
    value = decodeStateJson(text);
  } catch (e) {
    throw new SluiceError(
      `shuffle object ${key} is not valid JSON (${(e as Error).message}): it was cut short or written by something else; delete the run's shuffle objects of this batch and run again`,
      { retriable: false, cause: e },
    );
  }
  if (!check(value))
    throw new SluiceError(
      `shuffle object ${key} is not ${what}: it was written by another version of sluice or by something else; delete the run's shuffle objects of this batch and run again`,
      { retriable: false },
    );
  return value;
}

/** Engine rows hold JSON values only (timestamps as numbers, windows as {start, end}): their text is state JSON's. */
function rowsText(rows: readonly Row[]): string {
  return encodeStateJson(rows);
}

export const taskCodec = {
  run: { encode: (r: RunRecord) => encodeStateJson(r), decode: (key: string, text: string) => decode(key, text, isRunRecord, 'a run record') },
  tasks: { encode: (t: BatchTasks) => encodeStateJson(t), decode: (key: string, text: string) => decode(key, text, isBatchTasks, "a batch's task plan") },
  readMeta: { encode: (m: ReadMeta) => encodeStateJson(m), decode: (key: string, text: string) => decode(key, text, isReadMeta, "a read task's figures") },
  sections: {
    encode: (s: Sections) => JSON.stringify(s),
    decode: (key: string, text: string) => decode(key, text, isSections, "a read task's index of sections"),
  },
  partitionOut: {
    encode: (o: PartitionOut) => encodeStateJson(o),
    decode: (key: string, text: string) => decode(key, text, isPartitionOut, "a partition task's output"),
  },
  rows: { encode: rowsText, decode: (key: string, text: string): Row[] => decode(key, text, isRows, 'rows') },
  partials: {
    encode: (entries: readonly Json[]) => encodeStateJson([...entries]),
    decode: (key: string, text: string) => decode(key, text, isArray, 'partial groups'),
  },
};
