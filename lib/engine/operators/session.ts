/**
 * Session windows (Spark's SessionWindowStateStoreSaveExec): groupBy(session_window(col, gap),
 * columns). Each row opens a session [ts, ts + gap); sessions of a key that overlap or touch merge.
 * A key's state entry holds all its open sessions and expires with the earliest session end.
 *
 * A row an aggregation refuses (FORMAT-3 departure 2: sum/avg of a STRING whose text is not a
 * number, an exact sum past its type) is a dead letter, by the rule every aggregation operator
 * runs (aggregates.ts guardRow): its own input is checked as it arrives, and, when its session
 * merges, its one-row buffer against the session's running total (guardMerge), in the order of
 * the sessions' starts, as Spark's MergingSessionsExec folds a key's rows. A refused row neither
 * counts in nor extends any session. A stored session that a batch's rows bridge to another and
 * whose merge overflows has no row to blame: the batch fails, as Spark's query would.
 */
import { applyGuarded, type Buffer, type CompiledAgg, guardMerge, guardRow, initBuffer, mergeBuffers, refusesRows, updateBuffer } from '../aggregates';
import { SluiceError } from '../errors';
import { isSparkRowError } from '../expr/errors';
import type { RowErrorHandler } from '../rows';
import { refusalReason, valueText } from './overflow-guard';
import type { Json, OperatorStateSpec, Row, StateChange, StateEntry, StateStore } from '../ports';
import type { GroupKey, SessionKey } from '../plan/types';
import { timeOfValue } from '../plan/columns';
import { type BatchMeta, isLate, isPastWatermark } from './batch';
import { addMicros, canonicalMicros, ceilMillis, formatTimestamp, type Micros } from '../timestamps';
import { parseInterval } from '../duration';
import { plus as plusMonths } from '../expr/temporal-sequence';
import type { Accumulator, OperatorConfig, OperatorIo, OperatorOutput, StatefulOperator } from './operator';
import { stateId, statePartition } from './state-id';

interface Session {
  /** Epoch µs. */
  start: Micros;
  /** Exclusive: the last row's event time plus the gap (epoch µs). */
  end: Micros;
  buf: Buffer;
  /** Whether this batch made or extended it. */
  changed: boolean;
  /** A row of this batch as its one-row session, kept while an exact aggregate may refuse it when it merges (guardMerge), and its place in the batch's input. */
  row?: Row;
  seq?: number;
}

/**
 * The rows a batch refuses, made dead letters when it finishes in the order they came in (as
 * FORMAT-3 lists them): a bad text is found as the row arrives, an overflow only when its
 * session merges.
 */
class Refused {
  /** How many rows the batch has taken so far (a row's place in its input). */
  seen = 0;
  private readonly rows: { seq: number; row: Row; reason: string }[] = [];

  constructor(private readonly onRowError: RowErrorHandler) {}

  add(seq: number, row: Row, reason: string): void {
    this.rows.push({ seq, row, reason });
  }

  flush(): void {
    this.rows.sort((a, b) => a.seq - b.seq);
    for (const r of this.rows) this.onRowError(r.row, r.reason);
    this.rows.length = 0;
  }
}

/** A session as a state entry stores it. */
type StoredSession = [start: Micros, end: Micros, buf: Buffer];

/** The value of a key's state entry: its grouping values and its open sessions. */
type StoredSessions = {
  readonly k: Json[];
  readonly s: StoredSession[];
};

/** The sessions of one key of this batch's rows, not merged yet. */
interface FreshKey {
  readonly kv: Json[];
  readonly sessions: Session[];
}

/** A key's sessions, merged with its stored ones. */
interface KeySessions {
  readonly kv: Json[];
  readonly sessions: Session[];
  /** How many sessions its state entry held before this batch. */
  readonly before: number;
}

function fromStored([start, end, buf]: StoredSession): Session {
  return { start, end, buf, changed: false };
}

function toStored(s: Session): StoredSession {
  return [s.start, s.end, s.buf];
}

/** A key read back from its state entry, with no rows in this batch. */
function storedKey(value: StoredSessions): KeySessions {
  return { kv: value.k, sessions: value.s.map(fromStored), before: value.s.length };
}

/**
 * The end of the session a row opens with a dynamic gap, t + gap, or null when the row joins no
 * session: Spark's session window rewrite casts the STRING gap to a CalendarInterval (a text that
 * is not one is null, ANSI or not) and filters out rows whose session does not end after it
 * starts (a null, zero or negative gap). Months are added first, as a timestamp plus an interval
 * adds them.
 */
export function dynamicEnd(ts: Micros, gap: unknown): Micros | null {
  if (gap === null || gap === undefined) return null;
  let months: number;
  let us: number;
  try {
    ({ months, us } = parseInterval(String(gap), 'session window gap'));
  } catch {
    return null;
  }
  const end = months === 0 ? addMicros(ts, us) : canonicalMicros(plusMonths(BigInt(ts), months, BigInt(us)));
  return end > ts ? end : null;
}

export class SessionOperator implements StatefulOperator {
  readonly spec: OperatorStateSpec;
  readonly runsNoDataBatches: boolean;
  /** The grouping columns besides the session window. */
  private readonly others: string[];
  private readonly watermarked: boolean;
  /** Whether sessions expire: a watermark on the session's column, and not complete mode. */
  private readonly evicts: boolean;

  /** The query's state partitions (StateKey.partition). */
  private readonly partitions: number;
  /** Whether an aggregation may refuse a row (aggregates.ts refusesRows), and whether one adds exactly (refusals as sessions merge). */
  private readonly guarded: boolean;
  private readonly exact: boolean;

  constructor(
    private readonly keys: readonly GroupKey[],
    private readonly aggs: CompiledAgg[],
    private readonly session: SessionKey,
    private readonly cfg: OperatorConfig,
  ) {
    this.partitions = cfg.statePartitions ?? 1;
    this.guarded = refusesRows(aggs);
    this.exact = aggs.some((a) => a.exact === true);
    this.others = keys.filter((k) => k.kind === 'column').map((k) => (k as { name: string }).name);
    this.watermarked = cfg.watermarks.has(session.column);
    this.evicts = cfg.outputMode !== 'complete' && this.watermarked;
    const granularityUs = session.gapColumn === undefined && !session.calendarGap ? session.gapUs : 1_000_000;
    this.spec = { operatorId: cfg.operatorId, fixedEviction: false, evictionGranularityMs: Math.max(1, Math.floor(granularityUs / 1000)) };
    this.runsNoDataBatches = cfg.outputMode !== 'complete' && cfg.watermarks.size > 0;
  }

  /**
   * Whether the session a row opens is late: it ends at or before the previous batch's watermark.
   * Unlike other aggregations, Spark filters late rows for session windows in every output mode
   * (SessionWindowStateStoreRestoreExec), complete included; only eviction is mode-bound.
   */
  private isSessionLate(end: Micros, batch: BatchMeta): boolean {
    return this.watermarked && isLate(end, batch);
  }

  /** Whether a session closes in this batch: it ends at or before the batch's watermark. */
  private isSessionExpired(s: Session, batch: BatchMeta): boolean {
    return this.evicts && isPastWatermark(s.end, batch);
  }

  begin(batch: BatchMeta, io?: OperatorIo): Accumulator {
    const fresh = new Map<string, FreshKey>();
    const late: Row[] = [];
    // (without somewhere to send a refused row, its error fails the batch)
    const refused = this.guarded && io !== undefined ? new Refused(io.onRowError) : undefined;
    return {
      add: (rows) => this.accumulate(batch, rows, fresh, late, refused),
      finish: (state) => this.finish(batch, fresh, late, state, refused),
    };
  }

  /** The partition of a row's sessions: its grouping values without the session window. */
  partitionOf(row: Row): number {
    return statePartition(stateId(this.others.map((c) => (row[c] ?? null) as Json)), this.partitions);
  }

  private accumulate(batch: BatchMeta, rows: readonly Row[], fresh: Map<string, FreshKey>, late: Row[], refused: Refused | undefined): void {
    const { aggs, session, others } = this;
    const cand = new Array<Json>(aggs.length);
    for (const row of rows) {
      const ts = timeOfValue(row[session.column]); // (a window column: its window_time)
      if (ts === null || ts === undefined) continue;
      const end =
        session.gapColumn !== undefined
          ? dynamicEnd(ts, row[session.gapColumn])
          : session.calendarGap
            ? dynamicEnd(ts, session.text)
            : addMicros(ts, session.gapUs);
      // (a gap that is null, unreadable or not positive: Spark's filter drops the row before the aggregation)
      if (end === null) continue;
      if (this.isSessionLate(end, batch)) {
        late.push(row);
        continue;
      }
      const kv = others.map((c) => (row[c] ?? null) as Json);
      const buf = initBuffer(aggs);
      const seq = refused === undefined ? 0 : refused.seen++;
      if (refused === undefined) updateBuffer(aggs, buf, row);
      else {
        const refusal = guardRow(aggs, null, row, cand);
        if (refusal !== null) {
          refused.add(seq, row, refusalReason(refusal, this.keys, this.keyValues(kv, ts, end), row));
          continue;
        }
        applyGuarded(aggs, buf, cand, row);
      }
      const id = stateId(kv);
      let key = fresh.get(id);
      if (!key) fresh.set(id, (key = { kv, sessions: [] }));
      key.sessions.push(refused !== undefined && this.exact ? { start: ts, end, buf, changed: true, row, seq } : { start: ts, end, buf, changed: true });
    }
  }

  private async finish(batch: BatchMeta, fresh: Map<string, FreshKey>, late: Row[], state: StateStore, refused: Refused | undefined): Promise<OperatorOutput> {
    const version = batch.batchId - 1;
    const ids = [...fresh.keys()];
    const stored = ids.length
      ? await state.get(
          this.spec,
          ids.map((id) => ({ id, evictAt: null, partition: statePartition(id, this.partitions) })),
          version,
        )
      : new Map<string, StateEntry>();
    const groups = new Map<string, KeySessions>();
    for (const [id, key] of fresh) {
      const prev = stored.get(id)?.value as StoredSessions | undefined;
      const existing = prev ? prev.s.map(fromStored) : [];
      groups.set(id, { kv: key.kv, sessions: this.merge(key.kv, [...existing, ...key.sessions], batch.batchId, refused), before: existing.length });
    }
    const mode = this.cfg.outputMode;
    // keys without rows in this batch: all of them in complete mode, else those with a session that closes
    const others = mode === 'complete' ? await state.all(this.spec, version) : this.evicts ? await state.expired(this.spec, batch.evictWm, version) : [];
    for (const e of others) {
      if (!groups.has(e.key.id)) groups.set(e.key.id, storedKey(e.value as StoredSessions));
    }

    const out: Row[] = [];
    const changes: StateChange[] = [];
    let delta = 0;
    for (const id of [...groups.keys()].sort()) {
      const group = groups.get(id)!;
      const keep: Session[] = [];
      let changed = group.sessions.length !== group.before;
      for (const session of group.sessions) {
        if (session.changed) changed = true;
        if (mode === 'complete' || (mode === 'update' && session.changed)) out.push(this.toRow(group.kv, session));
        if (this.isSessionExpired(session, batch)) {
          if (mode === 'append') out.push(this.toRow(group.kv, session));
          changed = true;
        } else keep.push(session);
      }
      delta += keep.length - group.before;
      if (!changed) continue;
      // (the earliest end, in ms as stores keep eviction times: batch.ts)
      let first: Micros | null = null;
      for (const s of keep) if (first === null || s.end < first) first = s.end;
      const evictAt = first === null ? null : ceilMillis(first);
      const value: StoredSessions | null = keep.length ? { k: group.kv, s: keep.map(toStored) } : null;
      changes.push({ key: { id, evictAt: this.evicts ? evictAt : null, partition: statePartition(id, this.partitions) }, value: value as Json });
    }
    refused?.flush();
    return { rows: out, changes, late, stateRowsDelta: delta };
  }

  /**
   * Sorts and merges overlapping or touching sessions (Spark merges when start <= current end). A
   * session that holds a row of this batch (`row`) merges through the guard: refused, the row is
   * a dead letter and the session is dropped, neither counted nor extending the one it met.
   */
  private merge(kv: Json[], sessions: Session[], batchId: number, refused: Refused | undefined): Session[] {
    const { aggs } = this;
    sessions.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : a.end < b.end ? -1 : a.end > b.end ? 1 : 0));
    const out: Session[] = [];
    for (const s of sessions) {
      const cur = out[out.length - 1];
      if (cur && s.start <= cur.end) {
        let buf: Buffer;
        if (s.row !== undefined && refused !== undefined) {
          buf = new Array<Json>(aggs.length);
          const refusal = guardMerge(aggs, cur.buf, s.buf, buf);
          if (refusal !== null) {
            refused.add(s.seq!, s.row, refusalReason(refusal, this.keys, this.keyValues(kv, cur.start, cur.end), s.row));
            continue;
          }
        } else buf = this.mergeStored(kv, cur, s, batchId);
        cur.buf = buf;
        if (s.end > cur.end) cur.end = s.end;
        cur.changed = cur.changed || s.changed;
      } else out.push({ start: s.start, end: s.end, buf: s.buf, changed: s.changed });
    }
    return out;
  }

  /** The merge of a session with one that holds no row to blame (a stored one): an exact aggregate's overflow fails the batch. */
  private mergeStored(kv: Json[], cur: Session, s: Session, batchId: number): Buffer {
    try {
      return mergeBuffers(this.aggs, cur.buf, s.buf);
    } catch (e) {
      if (!isSparkRowError(e)) throw e;
      const key = this.others.map((c, i) => `${c} = ${valueText(kv[i])}`).join(', ');
      throw new SluiceError(
        `${e.message} (where batch ${batchId} merges sessions${key ? ` of ${key}` : ''} that its rows join into one from ${formatTimestamp(cur.start)}: ` +
          "a stored session's total has no single row to blame, so the batch fails, as Spark fails the query. " +
          'To go on, declare the summed column with a wider type (DECIMAL(38,0) for a BIGINT) under a new checkpoint)',
        { retriable: false, details: { errorClass: e.errorClass, group: kv, batchId } },
      );
    }
  }

  /** A key's grouping values with its session window [start, end], aligned with the grouping keys (for messages). */
  private keyValues(kv: readonly Json[], start: Micros, end: Micros): Json[] {
    let i = 0;
    return this.keys.map((k) => (k.kind === 'session' ? ([start, end] as Json) : kv[i++]));
  }

  private toRow(kv: Json[], s: Session): Row {
    const row: Row = {};
    let i = 0;
    for (const k of this.keys) {
      if (k.kind === 'session') row.session_window = { start: s.start, end: s.end };
      else if (k.kind === 'column') row[k.name] = kv[i++];
    }
    for (let a = 0; a < this.aggs.length; a++) row[this.aggs[a].spec.as] = this.aggs[a].finish(s.buf[a]);
    return row;
  }
}
