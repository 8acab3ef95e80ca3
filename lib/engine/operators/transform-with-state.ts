/**
 * transformWithState (FORMAT-4, Spark's TransformWithStateExec): a user's StatefulProcessor over
 * the rows grouped by key. A batch, stamped with its logged processing time T:
 *
 *   1 late rows        eventTime mode only: event time <= the previous batch's watermark, dropped
 *   2 input            handleInputRows once per key with rows, its rows in input order
 *   3 timers           due ones (expiry <= T, or <= the batch's watermark in eventTime mode), ascending
 *   4 TTL cleanup      values of the declared TTL variables expired at T removed
 *
 * State: one entry per grouping key (tws/handle.ts StoredKey: its variables and its timers) whose
 * evictAt is the earliest of its timers and TTL expirations, so `StateStore.expired` finds the
 * keys that have something due without reading the others; everything commits with the batch.
 */
import { ProcessorError, HANDLE_SLOT, type ProcessorOutputMode, type StatefulProcessor, type TimerValues } from '../tws/api';
import { BatchHandle, KeyState, type StoredKey, type VarDecl, type VarSchema } from '../tws/handle';
import { SluiceError } from '../errors';
import type { Json, OperatorStateSpec, Row, StateChange, StateEntry, StateStore } from '../ports';
import type { TransformWithStateSpec } from '../plan/types';
import type { ColumnInfo } from '../plan/columns';
import { watermarkTimeOf } from '../plan/columns';
import { type Column, type DataType, outputValue } from '../schema';
import { jsonValueOf, nonFiniteDouble } from '../json-record';
import { canonicalMicros, parseTimestamp, type Micros } from '../timestamps';
import { type BatchMeta, batchMeta, isLate } from './batch';
import type { Accumulator, OperatorConfig, OperatorOutput, StatefulOperator } from './operator';
import { byId, stateId, statePartition } from './state-id';

/**
 * The id of the operator's entry that records its state variables (VarSchema), in partition 0
 * beside the keys' entries: a key's id is stateId's JSON array text, which never starts with NUL.
 * It holds no user state (stateRows leaves it out) and never expires.
 */
export const VARS_ID = '\u0000vars';
const VARS_KEY = { id: VARS_ID, evictAt: null, partition: 0 } as const;

/**
 * The VARS_ID entry: the variables, whether the record was kept from the query's first batch on,
 * and the TTL variables the last batch declared (absent in records older than it: unknown).
 */
interface VarsRecord {
  readonly vars: VarSchema;
  readonly complete: boolean;
  readonly ttl?: readonly string[];
}

/** A key's rows in the batch, in input order. */
interface KeyRows {
  readonly values: Json[];
  readonly rows: Row[];
}

export class TransformWithStateOperator implements StatefulOperator {
  readonly spec: OperatorStateSpec;
  readonly runsNoDataBatches: boolean;
  private readonly partitions: number;
  /** The watermarked input column late rows are judged by (eventTime mode), if any. */
  private readonly eventColumn: string | undefined;
  private readonly outputMode: ProcessorOutputMode;

  constructor(
    private readonly tws: TransformWithStateSpec,
    private readonly cfg: OperatorConfig,
  ) {
    this.partitions = cfg.statePartitions ?? 1;
    const marked = [...cfg.watermarks.keys()].filter((c) => cfg.inputColumns.some((x) => x.name === c));
    this.eventColumn = marked[0];
    this.outputMode = cfg.outputMode === 'update' ? 'update' : 'append';
    // (eviction moves with the key's timers and TTL values: not fixed by the key)
    this.spec = { operatorId: cfg.operatorId, fixedEviction: false, evictionGranularityMs: 60_000 };
    // FORMAT-4: in time modes none and eventTime a no-data batch follows a watermark that moved;
    // in processingTime mode the planner asks dueWithoutData instead. Spark's condition is that
    // the operator has an eviction watermark: a withWatermark upstream, even when a projection
    // dropped its column before transformWithState
    this.runsNoDataBatches = tws.timeMode !== 'processingTime' && (cfg.watermarked ?? cfg.watermarks.size > 0);
  }

  /** Whether processing time is what makes a no-data batch due (the planner's rule for runs without new data). */
  get usesProcessingTime(): boolean {
    return this.tws.timeMode === 'processingTime';
  }

  /** Whether a timer or a TTL value is due at `nowMs` in the state at `version` (processingTime mode). */
  async dueWithoutData(state: StateStore, nowMs: number, version: number): Promise<boolean> {
    if (this.tws.timeMode !== 'processingTime') return false;
    if ((await state.expired(this.spec, nowMs, version)).length > 0) return true;
    // a TTL variable the processor declares that the last batch did not: its keys' due times left
    // it out (finish sets them from the batch's declarations), so its expired values are found
    // only by looking at every key; the batch would clean them (step 4), so it is due
    const declared = this.declaredOutsideBatch();
    if (declared === null) return false;
    const got = await state.get(this.spec, [VARS_KEY], version);
    const recorded = (got.get(VARS_ID)?.value as unknown as VarsRecord | undefined) ?? { vars: {}, complete: version < 0 };
    const held = (name: string) => !recorded.complete || name in recorded.vars;
    const redeclared = [...declared].some(([name, d]) => d.ttlMs !== 0 && held(name) && !recorded.ttl?.includes(name));
    if (!redeclared) return false;
    return (await state.all(this.spec, version)).some((e) => {
      if (e.key.id === VARS_ID) return false;
      const at = new KeyState(e.key.id, e.key.partition ?? 0, (e.value as unknown as StoredKey).k, e.value as unknown as StoredKey).dueAt(declared);
      return at !== null && at <= nowMs;
    });
  }

  /**
   * The state variables the processor's init declares, learned outside any batch (FORMAT-4
   * "Lifecycle": deleteIfExists does nothing there); null when init fails, which the batch reports.
   */
  private declaredOutsideBatch(): ReadonlyMap<string, VarDecl> | null {
    const handle = new BatchHandle({
      timeMode: this.tws.timeMode,
      nowMs: 0,
      inBatch: false,
      queryInfo: queryInfoOf(this.cfg.operatorId, batchMeta(-1, 0, 0)),
    });
    try {
      const processor = this.instantiate(handle);
      processor.init(handle, { outputMode: this.outputMode, timeMode: this.tws.timeMode });
      handle.enter('CLOSED');
      processor.close();
    } catch {
      return null;
    }
    return handle.declared;
  }

  partitionOf(row: Row): number {
    return statePartition(stateId(this.keyValues(row)), this.partitions);
  }

  private keyValues(row: Row): Json[] {
    return this.tws.keys.map((c) => (row[c] ?? null) as Json);
  }

  begin(batch: BatchMeta): Accumulator {
    const groups = new Map<string, KeyRows>();
    const late: Row[] = [];
    return {
      add: (rows) => {
        for (const row of rows) {
          if (this.tws.timeMode === 'eventTime' && this.eventColumn !== undefined && isLate(watermarkTimeOf(row[this.eventColumn]), batch)) {
            late.push(row);
            continue;
          }
          const values = this.keyValues(row);
          const id = stateId(values);
          let g = groups.get(id);
          if (!g) groups.set(id, (g = { values, rows: [] }));
          g.rows.push(row);
        }
      },
      finish: (state) => this.finish(batch, groups, late, state),
    };
  }

  /** The time timers are due at in the batch (null: time mode none has none). */
  private timerTime(batch: BatchMeta): number | null {
    if (this.tws.timeMode === 'processingTime') return batch.processingTimeMs;
    if (this.tws.timeMode === 'eventTime') return batch.evictWm;
    return null;
  }

  private async finish(batch: BatchMeta, groups: Map<string, KeyRows>, late: Row[], state: StateStore): Promise<OperatorOutput> {
    const version = batch.batchId - 1;
    const nowMs = batch.processingTimeMs;
    const handle = new BatchHandle({
      timeMode: this.tws.timeMode,
      nowMs,
      inBatch: true,
      queryInfo: queryInfoOf(this.cfg.operatorId, batch),
    });
    const processor = this.instantiate(handle);
    this.call('init', () => processor.init(handle, { outputMode: this.outputMode, timeMode: this.tws.timeMode }));
    handle.enter('INITIALIZED');
    const timerTime = this.timerTime(batch);
    // the keys the batch touches: those with rows, those with something due, every key when init deletes a variable
    const working = new Map<string, KeyState>();
    const load = (entries: Iterable<StateEntry>) => {
      for (const e of entries) {
        if (working.has(e.key.id) || e.key.id === VARS_ID) continue;
        const stored = e.value as unknown as StoredKey;
        working.set(e.key.id, new KeyState(e.key.id, e.key.partition ?? 0, stored.k, stored, e.key.evictAt));
      }
    };
    // the recorded variables come with the keys of the batch's rows (one read)
    const keys = [VARS_KEY, ...[...groups.keys()].map((id) => ({ id, evictAt: null, partition: statePartition(id, this.partitions) }))];
    const got = await state.get(this.spec, keys, version);
    const before = got.get(VARS_ID)?.value as unknown as VarsRecord | undefined;
    // a record kept since the query's first batch lists every variable any key holds (one begun
    // on an older checkpoint may not)
    const recorded: VarsRecord = before ?? { vars: {}, complete: version < 0 };
    load(got.values());
    // Spark's check of a restarted query's state variables, against every variable ever declared
    // (not only those the batch's keys hold); the record changes when init declares or deletes one
    const ttlDeclared = [...handle.declared].filter(([, d]) => d.ttlMs !== 0).map(([name]) => name);
    const record: VarsRecord = { vars: handle.nextSchema(recorded.vars), complete: recorded.complete, ttl: ttlDeclared.sort() };
    // then the errors Spark's executor raises in its own init (a bad name or TTL)
    handle.throwExecutorErrors();
    const recordChange = JSON.stringify(record) === JSON.stringify(before) || !(batch.partitions?.includes(0) ?? true) ? null : record;
    if (timerTime !== null) load(await state.expired(this.spec, timerTime, version));
    // deleting a variable reads every key, unless the record says no key holds it; so does a TTL
    // variable declared again after a batch that did not declare it: its keys' due times left it out
    // meanwhile, and step 4 cleans every key's expired values of the variables the batch declares
    const held = (name: string) => !recorded.complete || name in recorded.vars;
    const redeclared = ttlDeclared.filter((name) => held(name) && !recorded.ttl?.includes(name));
    if ([...handle.deletes].some(held) || redeclared.length > 0) load(await state.all(this.spec, version));
    // checked before the deletes, as nextSchema checks the record (a delete in the same init exempts nothing)
    for (const ks of working.values()) handle.checkStored(ks);
    for (const ks of working.values()) for (const name of handle.deletes) ks.vars.delete(name);
    const tv: TimerValues = { getCurrentProcessingTimeInMs: () => nowMs, getCurrentWatermarkInMs: () => batch.evictWm };
    const out: Row[] = [];
    // 2: input, per key in input order
    for (const [id, g] of groups) {
      let ks = working.get(id);
      if (!ks) working.set(id, (ks = new KeyState(id, statePartition(id, this.partitions), this.keyObject(g.values), null)));
      handle.current = ks;
      const rows = g.rows.map((r) => this.inputObject(r))[Symbol.iterator]();
      this.emit('handleInputRows', () => processor.handleInputRows(ks.key, rows, tv), out, batch);
    }
    // 3: due timers, ascending (ties by key id)
    if (timerTime !== null) {
      handle.enter('DATA_PROCESSED');
      const due: Array<[number, KeyState]> = [];
      for (const ks of working.values()) for (const t of ks.timers) if (t <= timerTime) due.push([t, ks]);
      due.sort((a, b) => a[0] - b[0] || (a[1].id < b[1].id ? -1 : a[1].id > b[1].id ? 1 : 0));
      for (const [t, ks] of due) {
        if (!ks.timers.has(t)) continue;
        handle.current = ks;
        this.emit('handleExpiredTimer', () => processor.handleExpiredTimer(ks.key, tv, { getExpiryTimeInMs: () => t }), out, batch);
        ks.timers.delete(t);
      }
    }
    handle.current = null;
    handle.enter('CLOSED');
    this.call('close', () => processor.close());
    // 4: TTL cleanup, then what changed
    const changes: StateChange[] = [];
    let delta = 0;
    for (const ks of working.values()) {
      ks.cleanExpired(handle.declared, nowMs);
      const stored = ks.toStored();
      const text = stored ? JSON.stringify(stored) : '';
      const evictAt = stored ? ks.dueAt(handle.declared) : null;
      delta += ks.rows() - ks.rowsBefore;
      if (text === ks.before && evictAt === ks.evictAtBefore) continue;
      if (!stored) {
        if (ks.before) changes.push({ key: { id: ks.id, evictAt: null, partition: ks.partition }, value: null });
        continue;
      }
      changes.push({ key: { id: ks.id, evictAt, partition: ks.partition }, value: stored as unknown as Json });
    }
    if (recordChange) changes.push({ key: VARS_KEY, value: recordChange as unknown as Json });
    return { rows: out, changes: changes.sort(byId), late, stateRowsDelta: delta };
  }

  /** A new instance of the processor with its handle set. */
  private instantiate(handle: BatchHandle): StatefulProcessor<object, object, object> {
    const p = this.call('constructor', () => new this.tws.processor());
    (p as unknown as { [HANDLE_SLOT]?: BatchHandle })[HANDLE_SLOT] = handle;
    return p;
  }

  /** Runs processor code: an engine error passes through, anything else is TRANSFORM_WITH_STATE_USER_FUNCTION_ERROR. */
  private call<T>(fn: string, f: () => T): T {
    try {
      return f();
    } catch (e) {
      if (e instanceof SluiceError) throw e;
      const msg = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
      throw new ProcessorError(
        'TRANSFORM_WITH_STATE_USER_FUNCTION_ERROR',
        `${this.tws.processorName}.${fn} threw ${msg}: fix the processor (the batch committed nothing and runs again on the next run)`,
      );
    }
  }

  /** A handler's rows, consumed fully (a generator runs here), each checked against the output schema. */
  private emit(fn: string, f: () => Iterable<object>, out: Row[], batch: BatchMeta): void {
    this.call(fn, () => {
      const rows = f();
      if (rows === null || rows === undefined || typeof (rows as Iterable<object>)[Symbol.iterator] !== 'function')
        throw new ProcessorError(
          'TRANSFORM_WITH_STATE_USER_FUNCTION_ERROR',
          `${this.tws.processorName}.${fn} returned ${rows === null ? 'null' : typeof rows}, not an iterable of rows: return an array (possibly empty) or a generator`,
        );
      for (const o of rows) out.push(this.outputRow(o, fn, batch));
    });
  }

  /** A grouping key as the processor sees it. */
  private keyObject(values: Json[]): { [column: string]: Json } {
    const key: { [column: string]: Json } = {};
    this.tws.keys.forEach((c, i) => {
      key[c] = processorValue(
        this.cfg.inputColumns.find((x) => x.name === c),
        values[i],
      );
    });
    return key;
  }

  private inputObject(row: Row): { [column: string]: Json } {
    const o: { [column: string]: Json } = {};
    for (const c of this.cfg.inputColumns) o[c.name] = processorValue(c, row[c.name]);
    return o;
  }

  /** An output object as an engine row of the output schema (FORMAT-4 "Output rows"). */
  private outputRow(o: object, fn: string, batch: BatchMeta): Row {
    const name = this.tws.processorName;
    if (o === null || typeof o !== 'object' || Array.isArray(o))
      throw new ProcessorError(
        'TRANSFORM_WITH_STATE_INVALID_OUTPUT_ROW',
        `${name}.${fn} emitted ${JSON.stringify(o)}, not an object: emit objects with the columns of the output schema (${this.tws.outputSchema.ddl})`,
      );
    const cols = this.tws.outputSchema.columns;
    const rec = o as Record<string, unknown>;
    for (const k of Object.keys(rec)) {
      if (!cols.some((c) => c.name === k))
        throw new ProcessorError(
          'TRANSFORM_WITH_STATE_INVALID_OUTPUT_ROW',
          `${name}.${fn} emitted a row with the property ${k}, which the output schema (${this.tws.outputSchema.ddl}) does not have: remove it, or add the column to outputSchema`,
        );
    }
    const row: Row = {};
    for (const c of cols) {
      const v = rec[c.name];
      row[c.name] = v === undefined || v === null ? null : engineValue(c, v, `${name}.${fn}`);
    }
    const et = this.tws.eventTimeColumn;
    if (et !== null) {
      const t = row[et] as Micros | null;
      if (t !== null && isLate(t, batch))
        throw new ProcessorError(
          'EMITTING_ROWS_OLDER_THAN_WATERMARK_NOT_ALLOWED',
          `${name}.${fn} emitted a row whose event time ${et} (${String(rec[et])}) is at or before the current watermark ${batch.lateWm} ms: emit rows later than the watermark, or do not name ${et} as eventTimeColumn`,
        );
    }
    return row;
  }
}

/**
 * The batch's QueryInfo: the checkpoint's query id and the run's id as the scheduler set them
 * (QueryRuntime.runIds); without them (an operator driven outside a scheduler, a unit test), the
 * operator's id and the batch's.
 */
function queryInfoOf(operatorId: string, batch: BatchMeta) {
  return {
    getQueryId: () => batch.queryId ?? operatorId,
    getRunId: () => batch.runId ?? `batch-${batch.batchId}`,
    getBatchId: () => batch.batchId,
  };
}

/**
 * An engine value as a processor sees it: TIMESTAMP as epoch ms, the rest as their output JSON (a
 * LONG beyond 2^53 - 1, which no number holds exactly, as the string of its digits).
 */
function processorValue(col: ColumnInfo | undefined, v: unknown): Json {
  if (v === null || v === undefined) return null;
  if (col?.type === 'TIMESTAMP' && (typeof v === 'number' || typeof v === 'bigint')) return Number(v) / 1000;
  if (typeof v === 'bigint') return col?.type === 'LONG' ? v.toString() : Number(v);
  // a DOUBLE is a number, NaN and the infinities too (their output JSON form is text)
  if (typeof v === 'number' && col?.type === 'DOUBLE') return v;
  return outputValue(col as DataType | undefined, v) as Json;
}

/** A value a processor emitted for column `c`, as the engine holds it; a value that does not fit fails the batch. */
function engineValue(c: Column, v: unknown, where: string): unknown {
  const bad = () =>
    new ProcessorError(
      'TRANSFORM_WITH_STATE_INVALID_OUTPUT_ROW',
      `${where} emitted ${JSON.stringify(v)} for the ${c.type} column ${c.name}, which does not fit it: emit a ${c.type === 'TIMESTAMP' ? 'number of epoch milliseconds or an ISO 8601 string' : `JSON value of type ${c.type}`}`,
    );
  switch (c.type) {
    case 'TIMESTAMP': {
      if (typeof v === 'number' && Number.isFinite(v)) return canonicalMicros(BigInt(Math.round(v * 1000)));
      if (typeof v === 'string') {
        const t = parseTimestamp(v);
        if (t !== null) return t;
      }
      throw bad();
    }
    case 'STRING':
      if (typeof v !== 'string') throw bad();
      return v;
    case 'BOOLEAN':
      if (typeof v !== 'boolean') throw bad();
      return v;
    case 'INT':
    case 'LONG':
      // (a LONG may come back as the string of its digits, the form a processor is given one beyond 2^53 - 1 in)
      if (!(typeof v === 'number' && Number.isInteger(v)) && !(c.type === 'LONG' && typeof v === 'string' && /^-?[0-9]+$/.test(v))) throw bad();
      break;
    case 'DOUBLE': {
      // a number, or the text of NaN or an infinity (their output JSON form)
      const n = typeof v === 'number' ? v : typeof v === 'string' ? nonFiniteDouble(v) : null;
      if (n === null) throw bad();
      return c.binary32 ? Math.fround(n) : n;
    }
  }
  const out = jsonValueOf(c, numberTexts(c, v));
  if (out === undefined) throw bad();
  return out;
}

const NUMBER_TEXT = /^-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$/;

/**
 * A processor's value with the text of each DECIMAL and LONG given as a string made a number's
 * text, as the JSON reader gives it: a processor receives a DECIMAL (and a LONG inside an array,
 * map or struct) in its output JSON form, a string, and may emit it back unchanged and exact.
 */
function numberTexts(t: DataType, v: unknown): unknown {
  if (v === null || v === undefined) return v;
  if ((t.type === 'DECIMAL' || t.type === 'LONG') && typeof v === 'string' && NUMBER_TEXT.test(v)) return { isLosslessNumber: true, value: v };
  if (t.type === 'ARRAY' && Array.isArray(v)) return v.map((e) => numberTexts(t.element!, e));
  if (t.type === 'MAP' && typeof v === 'object' && !Array.isArray(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, e] of Object.entries(v)) out[k] = numberTexts(t.value!, e);
    return out;
  }
  if (t.type === 'STRUCT' && typeof v === 'object' && !Array.isArray(v)) {
    const out: Record<string, unknown> = { ...(v as Record<string, unknown>) };
    for (const f of t.fields ?? []) if (Object.hasOwn(out, f.name)) out[f.name] = numberTexts(f, out[f.name]);
    return out;
  }
  return v;
}
