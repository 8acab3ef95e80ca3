/**
 * The engine side of a processor's handle (FORMAT-4 "The handle", "State variables", "TTL"):
 * the state variables a batch's init declares, each key's state and timers as the batch changes
 * them, and where each call is allowed. One grouping key's state is one state entry (KeyState
 * below, stored as `StoredKey`), so a batch reads and writes only the keys it touches and the keys
 * whose earliest timer or TTL expiration is due (the entry's evictAt).
 */
import type { Json as PortJson } from '../ports';
import {
  type ListState,
  type MapState,
  ProcessorError,
  type QueryInfo,
  type StatefulProcessorHandle,
  type StateValue,
  type TimeMode,
  type TTLConfig,
  type ValueState,
} from './api';

/** The three kinds of state variable, as stored: value, list, map. */
export type VarKind = 'v' | 'l' | 'm';

const KIND_NAMES: Record<VarKind, string> = { v: 'ValueState', l: 'ListState', m: 'MapState' };

/**
 * One state variable of one key, as stored. Items: a value `[value, exp]`; list elements
 * `[value, exp]` in order; map entries `[canonicalKey, key, value, exp]`. `exp` is the TTL
 * expiration (ms) or null; `t` is 1 when the variable was declared with a TTL.
 */
export interface StoredVar {
  k: VarKind;
  t: 0 | 1;
  i: PortJson[][];
}

/** A grouping key's state entry: its key as the processor sees it, its variables, its timers ascending. */
export interface StoredKey {
  k: { [column: string]: PortJson };
  s: { [name: string]: StoredVar };
  t: number[];
}

/**
 * The state variables the query's processors have declared, as the operator records them in its
 * state (transform-with-state.ts, VARS_ID): name to [kind, 1 when declared with a TTL]. Spark keeps
 * the same in the operator's state schema file, and checks a restarted query's declarations
 * against it whichever keys the batch touches.
 */
export interface VarSchema {
  [name: string]: [VarKind, 0 | 1];
}

/** A declared state variable of the batch. */
export interface VarDecl {
  readonly kind: VarKind;
  /** The TTL in ms, 0 for none. */
  readonly ttlMs: number;
}

/** Spark's handle states, as its errors name them. */
type Phase = 'PRE_INIT' | 'INITIALIZED' | 'DATA_PROCESSED' | 'TIMER_PROCESSED' | 'CLOSED';

/** A key's state during a batch: loaded from its entry (or new), changed in place. */
export class KeyState {
  readonly vars: Map<string, StoredVar>;
  readonly timers: Set<number>;
  /** The entry's text when loaded ('' for a new key): a key that ends the same is not written. */
  readonly before: string;
  /** User state rows when loaded. */
  readonly rowsBefore: number;

  constructor(
    readonly id: string,
    readonly partition: number,
    readonly key: { [column: string]: PortJson },
    stored: StoredKey | null,
    /** The loaded entry's evictAt: an entry whose due time changed (a TTL variable no longer declared) is written again. */
    readonly evictAtBefore: number | null = null,
  ) {
    this.vars = new Map(Object.entries(stored?.s ?? {}));
    this.timers = new Set(stored?.t ?? []);
    this.before = stored ? JSON.stringify(stored) : '';
    this.rowsBefore = this.rows();
  }

  /** User state rows: one per value, list element and map entry. */
  rows(): number {
    let n = 0;
    for (const v of this.vars.values()) n += v.i.length;
    return n;
  }

  /** What is stored for the key, or null when it holds nothing. */
  toStored(): StoredKey | null {
    if (this.timers.size === 0 && [...this.vars.values()].every((v) => v.i.length === 0)) return null;
    const s: { [name: string]: StoredVar } = {};
    for (const name of [...this.vars.keys()].sort()) {
      const v = this.vars.get(name)!;
      if (v.i.length) s[name] = v;
    }
    return { k: this.key, s, t: [...this.timers].sort((a, b) => a - b) };
  }

  /** The earliest of the key's timers and of the TTL expirations of the variables the batch declared (null: none). */
  dueAt(declared: ReadonlyMap<string, VarDecl>): number | null {
    let at: number | null = null;
    const consider = (t: number) => {
      if (at === null || t < at) at = t;
    };
    for (const t of this.timers) consider(t);
    for (const [name, v] of this.vars) {
      if (!v.t || !declared.get(name)?.ttlMs) continue;
      for (const item of v.i) {
        const exp = item[item.length - 1];
        if (typeof exp === 'number') consider(exp);
      }
    }
    return at;
  }

  /** Removes the items of the batch's TTL variables whose expiration is at or before `nowMs` (FORMAT-4 step 4). */
  cleanExpired(declared: ReadonlyMap<string, VarDecl>, nowMs: number): void {
    for (const [name, v] of this.vars) {
      if (!v.t || !declared.get(name)?.ttlMs) continue;
      v.i = v.i.filter((item) => !isExpiredAt(item[item.length - 1], nowMs));
    }
  }
}

function isExpiredAt(exp: PortJson, nowMs: number): boolean {
  return typeof exp === 'number' && nowMs >= exp;
}

/**
 * A state value as stored: a JSON copy, refused when null (ILLEGAL_STATE_STORE_VALUE.NULL_VALUE) or
 * when JSON cannot carry it unchanged (naming the variable).
 */
function storable(value: unknown, varName: string, what: string): PortJson {
  if (value === null || value === undefined)
    throw new ProcessorError(
      'ILLEGAL_STATE_STORE_VALUE.NULL_VALUE',
      `state variable ${varName}: ${what} is ${value === null ? 'null' : 'undefined'}, which a state variable cannot hold: clear() the value (or removeKey) instead of storing null`,
    );
  const bad = jsonProblem(value, '');
  if (bad !== null)
    throw new ProcessorError(
      'ILLEGAL_STATE_STORE_VALUE',
      `state variable ${varName}: ${what} ${bad}, which JSON cannot store unchanged: store plain JSON values (numbers, strings, booleans, arrays, plain objects)`,
    );
  return JSON.parse(JSON.stringify(value)) as PortJson;
}

/** Why a value is not plain JSON (e.g. `holds NaN at .x`), or null when it is. */
function jsonProblem(v: unknown, path: string): string | null {
  const at = path ? ` at ${path}` : '';
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return null;
  if (typeof v === 'number') return Number.isFinite(v) ? null : `holds ${v}${at}`;
  if (typeof v !== 'object') return `holds a ${typeof v}${at}`;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      if (!(i in v) || v[i] === undefined) return `holds undefined at ${path}[${i}]`;
      const p = jsonProblem(v[i], `${path}[${i}]`);
      if (p) return p;
    }
    return null;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return `holds an instance of ${(v as object).constructor?.name ?? 'a class'}${at}`;
  for (const [k, e] of Object.entries(v)) {
    if (e === undefined) return `holds undefined at ${path}.${k}`;
    const p = jsonProblem(e, `${path}.${k}`);
    if (p) return p;
  }
  return null;
}

/** A map key's identity: its JSON with object members sorted by name. */
function canonicalJson(v: PortJson): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  return `{${Object.keys(v)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`)
    .join(',')}}`;
}

function copy<T>(v: PortJson): T {
  return (v !== null && typeof v === 'object' ? JSON.parse(JSON.stringify(v)) : v) as T;
}

/** What the batch tells the handle: the time mode, the batch timestamp, the query's ids. */
export interface HandleContext {
  readonly timeMode: TimeMode;
  readonly nowMs: number;
  readonly queryInfo: QueryInfo;
  /** False for the init the engine runs outside a batch to learn the variables: deleteIfExists does nothing there. */
  readonly inBatch: boolean;
}

/** Spark's StatefulProcessorHandleImpl for one batch: the declared variables, the key being handled, the phase. */
export class BatchHandle implements StatefulProcessorHandle {
  readonly declared = new Map<string, VarDecl>();
  readonly deletes = new Set<string>();
  private phase: Phase = 'PRE_INIT';
  /** The key being handled (handleInputRows, handleExpiredTimer). */
  current: KeyState | null = null;

  constructor(private readonly ctx: HandleContext) {}

  enter(phase: Phase): void {
    this.phase = phase;
  }

  private invalidHandle(operation: string): ProcessorError {
    return new ProcessorError(
      'STATEFUL_PROCESSOR_CANNOT_PERFORM_OPERATION_WITH_INVALID_HANDLE_STATE',
      `Failed to perform stateful processor operation=${operation} with invalid handle state=${this.phase}: declare state variables and delete them in init; read and write them, and use timers, in handleInputRows and handleExpiredTimer`,
    );
  }

  /**
   * Spark runs init twice a batch: on the driver while it plans the batch (duplicate names, then
   * the state schema check), then on the executor (the column family name, the TTL checks). So a
   * driver error of init wins over an executor one, whatever the order of the calls: declare
   * throws the driver's errors at once and keeps the first executor error for
   * throwExecutorErrors, which the operator calls after its schema check.
   */
  private executorError: ProcessorError | null = null;

  private declare(kind: VarKind, name: string, ttl: TTLConfig | undefined, operation: string): VarDecl {
    if (this.phase !== 'PRE_INIT') throw this.invalidHandle(operation);
    if (this.declared.has(name))
      throw new ProcessorError(
        'STATEFUL_PROCESSOR_DUPLICATE_STATE_VARIABLE_DEFINED',
        `State variable with name ${name} has already been defined in init: give each state variable its own name`,
      );
    const ttlMs = ttl?.ttlDurationMs ?? 0;
    this.executorError ??= invalidName(name) ?? invalidTtl(name, ttlMs, this.ctx.timeMode);
    const decl = { kind, ttlMs };
    this.declared.set(name, decl);
    return decl;
  }

  /** The first executor error of the batch's init (a bad name or TTL), if any: see executorError. */
  throwExecutorErrors(): void {
    if (this.executorError) throw this.executorError;
  }

  /** The key's variable `name`, checked against its declaration (kind, TTL); created empty when absent. */
  private varOf(name: string, operation: string, create: boolean): StoredVar | null {
    if (this.phase !== 'INITIALIZED' && this.phase !== 'DATA_PROCESSED' && this.phase !== 'TIMER_PROCESSED') throw this.invalidHandle(operation);
    const ks = this.current!;
    let v = ks.vars.get(name) ?? null;
    if (!v && create) {
      const d = this.declared.get(name)!;
      v = { k: d.kind, t: d.ttlMs ? 1 : 0, i: [] };
      ks.vars.set(name, v);
    }
    return v;
  }

  /** The TTL expiration of a write now (null: no TTL). */
  private expOf(name: string): number | null {
    const ttlMs = this.declared.get(name)!.ttlMs;
    return ttlMs ? this.ctx.nowMs + ttlMs : null;
  }

  private live(items: PortJson[][]): PortJson[][] {
    return items.filter((item) => !isExpiredAt(item[item.length - 1], this.ctx.nowMs));
  }

  getValueState<T extends StateValue>(stateName: string, ttlConfig?: TTLConfig): ValueState<T> {
    this.declare('v', stateName, ttlConfig, 'get_value_state');
    const op = (o: string) => `valueState.${o}`;
    const value = (o: string) => this.live(this.varOf(stateName, op(o), false)?.i ?? [])[0];
    return {
      exists: () => value('exists') !== undefined,
      get: () => {
        const item = value('get');
        return item === undefined ? undefined : copy<T>(item[0]);
      },
      update: (newState: T) => {
        const stored = storable(newState, stateName, 'the value');
        this.varOf(stateName, op('update'), true)!.i = [[stored, this.expOf(stateName)]];
      },
      clear: () => {
        const v = this.varOf(stateName, op('clear'), false);
        if (v) v.i = [];
      },
    };
  }

  getListState<T extends StateValue>(stateName: string, ttlConfig?: TTLConfig): ListState<T> {
    this.declare('l', stateName, ttlConfig, 'get_list_state');
    const op = (o: string) => `listState.${o}`;
    const elements = (list: readonly T[], o: string): PortJson[][] => {
      // Spark's validateNewState: a null list is NULL_VALUE, as a null element is
      if (list === null || list === undefined)
        throw new ProcessorError(
          'ILLEGAL_STATE_STORE_VALUE.NULL_VALUE',
          `state variable ${stateName}: listState.${o} was given ${list === null ? 'null' : 'undefined'} for the list, which a state variable cannot hold: call clear() to remove the list`,
        );
      if (!Array.isArray(list))
        throw new ProcessorError('ILLEGAL_STATE_STORE_VALUE', `state variable ${stateName}: listState.${o} takes an array of elements, not ${typeof list}`);
      const exp = this.expOf(stateName);
      return list.map((e, i) => [storable(e, stateName, `element ${i}`), exp]);
    };
    const nonEmpty = (list: readonly T[], o: string) => {
      if (Array.isArray(list) && list.length === 0)
        throw new ProcessorError(
          'ILLEGAL_STATE_STORE_VALUE.EMPTY_LIST_VALUE',
          `state variable ${stateName}: listState.${o} was given an empty list, which it cannot store: call clear() to remove the list`,
        );
    };
    return {
      exists: () => this.live(this.varOf(stateName, op('exists'), false)?.i ?? []).length > 0,
      get: () => {
        const items = this.live(this.varOf(stateName, op('get'), false)?.i ?? []).map((item) => copy<T>(item[0]));
        return items[Symbol.iterator]();
      },
      put: (list: readonly T[]) => {
        nonEmpty(list, 'put');
        const items = elements(list, 'put');
        this.varOf(stateName, op('put'), true)!.i = items;
      },
      appendValue: (e: T) => {
        const item: PortJson[] = [storable(e, stateName, 'the element'), this.expOf(stateName)];
        const v = this.varOf(stateName, op('appendValue'), true)!;
        v.i = [...this.live(v.i), item];
      },
      appendList: (list: readonly T[]) => {
        nonEmpty(list, 'appendList');
        const items = elements(list, 'appendList');
        const v = this.varOf(stateName, op('appendList'), true)!;
        v.i = [...this.live(v.i), ...items];
      },
      clear: () => {
        const v = this.varOf(stateName, op('clear'), false);
        if (v) v.i = [];
      },
    };
  }

  getMapState<K extends StateValue, V extends StateValue>(stateName: string, ttlConfig?: TTLConfig): MapState<K, V> {
    this.declare('m', stateName, ttlConfig, 'get_map_state');
    const op = (o: string) => `mapState.${o}`;
    const entries = (o: string) => this.live(this.varOf(stateName, op(o), false)?.i ?? []);
    const keyOf = (k: K, o: string) => canonicalJson(storable(k, stateName, `the map key given to ${o}`));
    const find = (k: K, o: string) => {
      const c = keyOf(k, o);
      return entries(o).find((e) => e[0] === c);
    };
    return {
      exists: () => entries('exists').length > 0,
      getValue: (k: K) => {
        const e = find(k, 'getValue');
        return e === undefined ? undefined : copy<V>(e[2]);
      },
      containsKey: (k: K) => find(k, 'containsKey') !== undefined,
      updateValue: (k: K, value: V) => {
        const key = storable(k, stateName, 'the map key');
        const stored = storable(value, stateName, 'the map value');
        const c = canonicalJson(key);
        const v = this.varOf(stateName, op('updateValue'), true)!;
        v.i = [...this.live(v.i).filter((e) => e[0] !== c), [c, key, stored, this.expOf(stateName)]];
      },
      iterator: () =>
        entries('iterator')
          .map((e): [K, V] => [copy<K>(e[1]), copy<V>(e[2])])
          [Symbol.iterator](),
      keys: () =>
        entries('keys')
          .map((e) => copy<K>(e[1]))
          [Symbol.iterator](),
      values: () =>
        entries('values')
          .map((e) => copy<V>(e[2]))
          [Symbol.iterator](),
      removeKey: (k: K) => {
        const c = keyOf(k, 'removeKey');
        const v = this.varOf(stateName, op('removeKey'), false);
        if (v) v.i = v.i.filter((e) => e[0] !== c);
      },
      clear: () => {
        const v = this.varOf(stateName, op('clear'), false);
        if (v) v.i = [];
      },
    };
  }

  getQueryInfo(): QueryInfo {
    return this.ctx.queryInfo;
  }

  private timerKey(operation: string): KeyState {
    if (this.ctx.timeMode === 'none')
      throw new ProcessorError(
        'STATEFUL_PROCESSOR_CANNOT_PERFORM_OPERATION_WITH_INVALID_TIME_MODE',
        `Failed to perform stateful processor operation=${operation} with invalid timeMode=NoTime: timers need TimeMode processingTime or eventTime`,
      );
    if ((this.phase !== 'INITIALIZED' && this.phase !== 'DATA_PROCESSED' && this.phase !== 'TIMER_PROCESSED') || !this.current)
      throw this.invalidHandle(operation);
    return this.current;
  }

  registerTimer(expiryTimestampMs: number): void {
    const ks = this.timerKey('register_timer');
    ks.timers.add(timerMs(expiryTimestampMs, 'registerTimer'));
  }

  deleteTimer(expiryTimestampMs: number): void {
    const ks = this.timerKey('delete_timer');
    ks.timers.delete(timerMs(expiryTimestampMs, 'deleteTimer'));
  }

  listTimers(): IterableIterator<number> {
    const ks = this.timerKey('list_timers');
    return [...ks.timers].sort((a, b) => a - b)[Symbol.iterator]();
  }

  deleteIfExists(stateName: string): void {
    if (this.phase !== 'PRE_INIT') throw this.invalidHandle('delete_if_exists');
    if (this.ctx.inBatch) this.deletes.add(stateName);
  }

  /**
   * A loaded key's variables against the batch's declarations: another kind under a declared name
   * (STATE_STORE_INVALID_VARIABLE_TYPE_CHANGE), a TTL added or dropped (STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE).
   */
  checkStored(ks: KeyState): void {
    for (const [name, v] of ks.vars) if (v.i.length) this.checkVariable(name, v.k, v.t);
  }

  /**
   * The recorded variables after the batch's init (a copy): each declared one checked against
   * what is recorded under its name, the deleted ones dropped, then the declared ones recorded.
   * The check comes before the deletes: Spark collects the declarations with a driver-side handle
   * whose deleteIfExists deletes nothing, and compares them with the recorded variables, so a
   * deleteIfExists(name) in the same init does not let it declare `name` as another kind.
   */
  nextSchema(recorded: Readonly<VarSchema>): VarSchema {
    const next: VarSchema = {};
    for (const [name, kt] of Object.entries(recorded)) {
      this.checkVariable(name, kt[0], kt[1]);
      if (!this.deletes.has(name)) next[name] = kt;
    }
    for (const [name, d] of this.declared) next[name] = [d.kind, d.ttlMs !== 0 ? 1 : 0];
    return next;
  }

  /** A variable stored as `kind` (with a TTL when `ttl` is 1) against the batch's declaration of its name, if any. */
  private checkVariable(name: string, kind: VarKind, ttl: 0 | 1): void {
    const d = this.declared.get(name);
    if (!d) return;
    if (d.kind !== kind)
      throw new ProcessorError(
        'STATE_STORE_INVALID_VARIABLE_TYPE_CHANGE',
        `Cannot change state variable ${name} from ${KIND_NAMES[kind]} to ${KIND_NAMES[d.kind]}: keep its kind, or call deleteIfExists(${JSON.stringify(name)}) in init and declare it under another name`,
      );
    if ((d.ttlMs !== 0) !== (ttl === 1))
      throw new ProcessorError(
        'STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE',
        `state variable ${name} was stored ${ttl ? 'with' : 'without'} a TTL and is now declared ${d.ttlMs !== 0 ? 'with' : 'without'} one: its stored values cannot change schema; keep the TTL setting, or deleteIfExists(${JSON.stringify(name)}) and use a new name`,
      );
  }
}

function timerMs(ms: unknown, call: string): number {
  if (typeof ms !== 'number' || !Number.isFinite(ms))
    throw new ProcessorError('STATEFUL_PROCESSOR_INVALID_TIMER', `${call}(${String(ms)}): a timer's expiry must be a finite number of epoch milliseconds`);
  return ms;
}

/** Spark's names of the time modes, as its errors print them. */
function timeModeName(mode: TimeMode): string {
  return mode === 'none' ? 'NoTime' : mode === 'processingTime' ? 'ProcessingTime' : 'EventTime';
}

/**
 * Spark's RocksDB provider refuses such a column family name (on the executor): empty, with
 * leading or trailing blanks, or its own "default".
 */
function invalidName(name: unknown): ProcessorError | null {
  if (typeof name === 'string' && name !== '' && name.trim() === name && name !== 'default') return null;
  return new ProcessorError(
    'STATE_STORE_CANNOT_USE_COLUMN_FAMILY_WITH_INVALID_NAME',
    `Failed to perform column family operation=create_col_family with invalid name=${JSON.stringify(name)}: name each state variable with a non-empty string without leading or trailing blanks, other than "default"`,
  );
}

/** StatefulProcessorHandleImpl.validateTTLConfig (on the executor): the time mode first, then the duration. 0 is no TTL. */
function invalidTtl(name: string, ttlMs: number, timeMode: TimeMode): ProcessorError | null {
  if (ttlMs === 0) return null;
  if (timeMode !== 'processingTime')
    return new ProcessorError(
      'STATEFUL_PROCESSOR_INCORRECT_TIME_MODE_TO_ASSIGN_TTL',
      `Cannot use TTL for state=${name} in timeMode=${timeModeName(timeMode)}: a TTL counts processing time, so use TimeMode processingTime, or leave the ttlConfig out`,
    );
  if (!(ttlMs > 0) || !Number.isFinite(ttlMs))
    return new ProcessorError(
      'STATEFUL_PROCESSOR_TTL_DURATION_MUST_BE_POSITIVE',
      `TTL duration ${ttlMs} of state=${name} must be a positive number of milliseconds: give ttlDurationMs > 0, or 0 for no TTL`,
    );
  return null;
}
