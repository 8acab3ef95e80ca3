/**
 * The transformWithState processor API (FORMAT-4, Spark 4.0's StatefulProcessor in Python's
 * `init(handle)` shape): what a user's processor extends and what its handle offers. The engine
 * side (state variables, timers, TTL, the batch's order of calls) is in handle.ts and
 * operators/transform-with-state.ts.
 */
import { SluiceError } from '../errors';

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** What a state variable holds, and what a MapState key is: any JSON value except null. */
export type StateValue = boolean | number | string | Json[] | { [key: string]: Json };

/** Spark's TimeMode.None(), TimeMode.ProcessingTime(), TimeMode.EventTime(). */
export type TimeMode = 'none' | 'processingTime' | 'eventTime';

/** The output modes a transformWithState query may use (complete is refused). */
export type ProcessorOutputMode = 'append' | 'update';

/**
 * A grouping key, an input row or an output row: an object keyed by column name. Input values:
 * STRING string, INT/LONG/DOUBLE number, BOOLEAN boolean, TIMESTAMP epoch milliseconds (number),
 * null when null. An output row may leave a column out or set it to undefined: it is null.
 */
export type ProcessorRow = { readonly [column: string]: Json | undefined };

/** Spark's TTLConfig. Absent, or ttlDurationMs 0, is no TTL (Spark's TTLConfig.NONE). */
export interface TTLConfig {
  /** Time to live in milliseconds, counted from the batch timestamp of the write. */
  readonly ttlDurationMs: number;
}

/** Spark's TimerValues: the same two values for every call of one batch. */
export interface TimerValues {
  /** The batch timestamp, in every time mode. */
  getCurrentProcessingTimeInMs(): number;
  /** The batch's eviction watermark; 0 until the watermark has moved, and in a query without one. */
  getCurrentWatermarkInMs(): number;
}

/** Spark's ExpiredTimerInfo. */
export interface ExpiredTimerInfo {
  /** The expiry of the timer being handled, as registered. */
  getExpiryTimeInMs(): number;
}

/** Spark's QueryInfo. */
export interface QueryInfo {
  /** Stable for the checkpoint. */
  getQueryId(): string;
  /** One per run. */
  getRunId(): string;
  getBatchId(): number;
}

/** Spark's ValueState: one value per grouping key. */
export interface ValueState<T extends StateValue> {
  /** True when the key has a value that has not expired. */
  exists(): boolean;
  /** The key's value (a copy), or undefined when it has none or it has expired. */
  get(): T | undefined;
  /** Sets the key's value (stored as JSON). With TTL: expires at batch timestamp + TTL. */
  update(newState: T): void;
  /** Removes the key's value. */
  clear(): void;
}

/** Spark's ListState: a list per grouping key, in insertion order. */
export interface ListState<T extends StateValue> {
  /** True when the key has at least one element that has not expired. */
  exists(): boolean;
  /** The key's unexpired elements, as they are when get() is called; empty when none. */
  get(): IterableIterator<T>;
  /** Replaces the key's list; an empty list is refused (ILLEGAL_STATE_STORE_VALUE.EMPTY_LIST_VALUE). */
  put(newState: readonly T[]): void;
  /** Appends one element. */
  appendValue(newState: T): void;
  /** Appends the elements in order; an empty list is refused (EMPTY_LIST_VALUE). */
  appendList(newState: readonly T[]): void;
  /** Removes the key's list. */
  clear(): void;
}

/** Spark's MapState: a map per grouping key. Keys are equal when their canonical JSON is. */
export interface MapState<K extends StateValue, V extends StateValue> {
  /** True when the key's map has at least one unexpired entry. */
  exists(): boolean;
  /** The value under userKey (a copy), or undefined when absent or expired. */
  getValue(userKey: K): V | undefined;
  containsKey(userKey: K): boolean;
  /** Sets one entry. With TTL: that entry expires at batch timestamp + TTL. */
  updateValue(userKey: K, value: V): void;
  /** The unexpired entries, as they are when called; order unspecified. */
  iterator(): IterableIterator<[K, V]>;
  keys(): IterableIterator<K>;
  values(): IterableIterator<V>;
  removeKey(userKey: K): void;
  /** Removes the key's whole map. */
  clear(): void;
}

/** Spark's StatefulProcessorHandle. */
export interface StatefulProcessorHandle {
  /** In init only. */
  getValueState<T extends StateValue>(stateName: string, ttlConfig?: TTLConfig): ValueState<T>;
  /** In init only. */
  getListState<T extends StateValue>(stateName: string, ttlConfig?: TTLConfig): ListState<T>;
  /** In init only. */
  getMapState<K extends StateValue, V extends StateValue>(stateName: string, ttlConfig?: TTLConfig): MapState<K, V>;
  getQueryInfo(): QueryInfo;
  /** In handleInputRows and handleExpiredTimer, for the key being handled; not in time mode none. */
  registerTimer(expiryTimestampMs: number): void;
  /** Likewise; deleting a timer that is not registered does nothing. */
  deleteTimer(expiryTimestampMs: number): void;
  /** The key's registered timers, ascending; in handleExpiredTimer it includes the timer being handled. */
  listTimers(): IterableIterator<number>;
  /** In init only: removes a state variable and all its values, for every key, if it exists. */
  deleteIfExists(stateName: string): void;
}

/** What Spark's init(outputMode, timeMode) receives. */
export interface ProcessorModes {
  readonly outputMode: ProcessorOutputMode;
  readonly timeMode: TimeMode;
}

/**
 * Where the engine puts a processor's handle: a registered symbol, so that a processor module
 * that imports another copy of this package still gets it.
 */
export const HANDLE_SLOT: unique symbol = Symbol.for('sluice.statefulProcessorHandle');

/**
 * Spark's StatefulProcessor. A processor module's default export extends this class and has a
 * constructor without arguments. The engine makes a new instance for every batch (fields do not
 * survive from one batch to the next; only state variables and timers do) and calls: init once,
 * handleInputRows once per key that has rows in the batch, handleExpiredTimer once per timer that
 * fires, close once.
 *
 * K, I and O are the key, input and output rows; `frame.groupBy(...).transformWithState(...)`
 * checks them against the frame's columns and the output schema.
 */
export abstract class StatefulProcessor<K extends object = ProcessorRow, I extends object = ProcessorRow, O extends object = ProcessorRow> {
  /** The handle of the current batch (the same object init receives). */
  getHandle(): StatefulProcessorHandle {
    const h = (this as unknown as { [HANDLE_SLOT]?: StatefulProcessorHandle })[HANDLE_SLOT];
    if (!h)
      throw new ProcessorError(
        'STATE_STORE_HANDLE_NOT_INITIALIZED',
        'getHandle() was called before the engine set the handle: call it from init, handleInputRows, handleExpiredTimer or close, not from the constructor',
      );
    return h;
  }

  /** Declares the state variables (and may delete old ones); nothing else. */
  abstract init(handle: StatefulProcessorHandle, modes: ProcessorModes): void;

  /** All of the key's rows of the batch, in input order, consumable once. Returns the output rows. */
  abstract handleInputRows(key: K, rows: IterableIterator<I>, timerValues: TimerValues): Iterable<O>;

  /** One expired timer of the key. Returns the output rows. The default returns none. */
  handleExpiredTimer(_key: K, _timerValues: TimerValues, _expiredTimerInfo: ExpiredTimerInfo): Iterable<O> {
    return [];
  }

  /** Called once at the end of the batch. The default does nothing. */
  close(): void {}
}

/** A class a processor module exports: constructed without arguments. */
export type ProcessorClass = new () => StatefulProcessor<object, object, object>;

/** An error of transformWithState with Spark's error class, which begins its message in brackets. */
export class ProcessorError extends SluiceError {
  constructor(
    readonly errorClass: string,
    message: string,
  ) {
    super(`[${errorClass}] ${message}`, { retriable: false, details: { errorClass } });
  }
}
