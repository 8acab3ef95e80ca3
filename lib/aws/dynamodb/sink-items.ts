/**
 * The items of DynamoDbSink (sink.ts, whose comment has the layout): a row's sort key and its
 * session, the chunks a batch's rows are cut into and their digests, the attribute values of
 * output values, and the checks of the sink's options and columns.
 */
import { createHash } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { InvalidOptionError, SluiceError } from '../../engine/errors';
import { parseDate } from '../../engine/dates';
import { ddlOf } from '../../engine/ddl';
import { decimalOfText } from '../../engine/decimal';
import type { Json, OutputColumnType, OutputRow } from '../../engine/ports';
import type { DataType } from '../../engine/schema';
import { type Item, itemSize, SORT_KEY_MAX_BYTES } from './requests';
import { TRANSACTION_MAX_ACTIONS, TRANSACTION_MAX_BYTES } from './transaction';

/** A stored row with its bookkeeping. */
export interface DynamoDbSinkItem {
  readonly key: string;
  readonly batchId: number;
  readonly queryId: string;
  readonly row: OutputRow;
}

/** Attributes the sink uses itself; output columns of these names are refused. */
export const RESERVED_ATTRIBUTES = ['pk', 'sk', 'batchId', 'queryId', 'ttl'] as const;

export interface PreparedRow {
  readonly sk: string;
  readonly item: Item;
  readonly bytes: number;
  /** The item in a canonical form (attributes sorted): what the chunk digest covers. */
  readonly content: string;
  /** For a session window's row: its grouping keys' part of the sort key, and the session. */
  readonly session?: SessionOfRow;
}

export interface SessionOfRow {
  readonly group: string;
  readonly start: string;
  readonly end: string;
}

/** The output column of a session window (lib/engine/run/runtime.ts names it so). */
const SESSION_COLUMN = 'session_window';

export interface Chunk {
  readonly index: number;
  readonly rows: PreparedRow[];
  /** sha256 of the chunk's rows (keys and values), recorded on its marker. */
  readonly digest: string;
}

/**
 * Deterministic chunks, a row at a time: the same rows in the same order always give the same
 * chunks (at most the transaction's actions less the marker and the fence, and its bytes).
 */
export class Chunker {
  private readonly perChunk: number;
  private cur: PreparedRow[] = [];
  private bytes = 0;
  private next = 0;

  constructor(fenced: boolean) {
    this.perChunk = TRANSACTION_MAX_ACTIONS - 1 - (fenced ? 1 : 0);
  }

  /** Adds a row; returns the chunk it closed (the row did not fit), else null. */
  add(r: PreparedRow): Chunk | null {
    const closed = this.cur.length > 0 && (this.cur.length >= this.perChunk || this.bytes + r.bytes > TRANSACTION_MAX_BYTES - 4096) ? this.close() : null;
    this.cur.push(r);
    this.bytes += r.bytes;
    return closed;
  }

  /** The last chunk, partly filled, or null when it holds nothing. */
  finish(): Chunk | null {
    return this.cur.length > 0 ? this.close() : null;
  }

  private close(): Chunk {
    const chunk = { index: this.next++, rows: this.cur, digest: chunkDigest(this.cur) };
    this.cur = [];
    this.bytes = 0;
    return chunk;
  }
}

// -----------------------------------------------------------------------------------------------
// Items

/** The sort key of a keyed row: the JSON of its key values, hashed when too long for a sort key. */
export function rowKey(values: Json[]): string {
  const json = JSON.stringify(values);
  return Buffer.byteLength(json, 'utf8') <= SORT_KEY_MAX_BYTES ? json : `h:${createHash('sha256').update(json).digest('hex')}`;
}

/**
 * The session of a session window's row: its grouping keys' part of the sort key (their JSON, or
 * its hash when long) and the window's bounds; undefined for any other row.
 */
export function sessionOf(row: OutputRow, keyColumns: readonly string[]): SessionOfRow | undefined {
  if (!keyColumns.includes(SESSION_COLUMN)) return undefined;
  const w = row[SESSION_COLUMN];
  if (w === null || typeof w !== 'object' || Array.isArray(w) || typeof w.start !== 'string' || typeof w.end !== 'string') return undefined;
  const json = JSON.stringify(keyColumns.filter((c) => c !== SESSION_COLUMN).map((c) => (row[c] === undefined ? null : row[c])));
  // Room in the 1,024-byte sort key for '#' and the two bounds.
  const group = Buffer.byteLength(json, 'utf8') <= SORT_KEY_MAX_BYTES - 100 ? json : `h:${createHash('sha256').update(json).digest('hex')}`;
  return { group, start: w.start, end: w.end };
}

/** JSON with object keys sorted, at every depth: one text per value, whatever its key order. */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
    .join(',')}}`;
}

/** The digest a chunk's marker records: sha256 over its items (keys and values), in chunk order. */
function chunkDigest(rows: readonly PreparedRow[]): string {
  const h = createHash('sha256');
  for (const r of rows) h.update(r.content).update('\n');
  return h.digest('hex');
}

export function toAttr(v: Json | undefined, where: string): AttributeValue {
  if (v === null || v === undefined) return { NULL: true };
  if (typeof v === 'string') return { S: v };
  if (typeof v === 'boolean') return { BOOL: v };
  if (typeof v === 'number') return { N: numberText(v, where) };
  if (Array.isArray(v)) return { L: v.map((x, i) => toAttr(x, `${where}[${i}]`)) };
  const m: Record<string, AttributeValue> = {};
  for (const [k, x] of Object.entries(v)) m[k] = toAttr(x, `${where}.${k}`);
  return { M: m };
}

/** DynamoDB's numbers: at most 38 significant digits, magnitudes from 1E-130 to below 1E+126 (and 0). */
const N_MIN_MAGNITUDE = 1e-130;
const N_MAX_MAGNITUDE = 1e126;

/** A double's N text, or the refusal of one DynamoDB cannot store (non-finite, or out of N's range). */
function numberText(v: number, where: string): string {
  if (!Number.isFinite(v))
    throw new SluiceError(`column ${where} holds ${v}, which DynamoDB cannot store as a number: filter or replace non-finite values before the sink`);
  if (v !== 0 && (Math.abs(v) < N_MIN_MAGNITUDE || Math.abs(v) >= N_MAX_MAGNITUDE)) {
    throw new SluiceError(
      `column ${where} holds ${v}, outside the magnitudes a DynamoDB number holds (1E-130 to below 1E+126): round or clamp the value before the sink, or write this column to an S3 sink`,
    );
  }
  return String(v);
}

/**
 * The attribute of an output value of `type`, at any depth: a DECIMAL as an N of its exact text
 * ("12.30": 38 digits at most, which is DynamoDB's precision), a BIGINT as an N of its digits
 * (also beyond 2^53), INT and DOUBLE as N, DATE, TIMESTAMP and STRING as S, BOOLEAN as BOOL,
 * ARRAY as L, MAP and STRUCT as M (a STRUCT with every declared field), null as NULL. "NaN" and
 * the infinities of a DOUBLE stay S, as the output row spells them. A value not of its type is
 * refused with the column, the value and the fix (Sink.check makes it a dead letter).
 */
export function toTypedAttr(v: Json | undefined, type: OutputColumnType | DataType | undefined, where: string): AttributeValue {
  if (v === null || v === undefined) return { NULL: true };
  if (type === undefined || type === 'WINDOW') return toAttr(v, where);
  switch (type.type) {
    case 'DECIMAL':
      if (typeof v === 'string' && decimalOfText(v, type.precision ?? 10, type.scale ?? 0) === v) return { N: v };
      break;
    case 'LONG':
      if (typeof v === 'number' && Number.isSafeInteger(v)) return { N: String(v) };
      if (typeof v === 'string' && /^-?[0-9]+$/.test(v)) return { N: v };
      break;
    case 'INT':
      if (typeof v === 'number' && Number.isInteger(v)) return { N: String(v) };
      break;
    case 'DOUBLE':
      if (typeof v === 'number') return { N: numberText(v, where) };
      if (v === 'NaN' || v === 'Infinity' || v === '-Infinity') return { S: v };
      break;
    case 'STRING':
    case 'TIMESTAMP':
      if (typeof v === 'string') return { S: v };
      break;
    case 'DATE':
      if (typeof v === 'string' && parseDate(v) !== null) return { S: v };
      break;
    case 'BOOLEAN':
      if (typeof v === 'boolean') return { BOOL: v };
      break;
    case 'ARRAY':
      if (Array.isArray(v)) return { L: v.map((x, i) => toTypedAttr(x, type.element, `${where}[${i}]`)) };
      break;
    case 'MAP':
      if (typeof v === 'object' && !Array.isArray(v)) {
        const m: Record<string, AttributeValue> = {};
        for (const [k, x] of Object.entries(v)) m[k] = toTypedAttr(x, type.value, `${where}[${JSON.stringify(k)}]`);
        return { M: m };
      }
      break;
    case 'STRUCT':
      if (typeof v === 'object' && !Array.isArray(v)) {
        const m: Record<string, AttributeValue> = {};
        for (const f of type.fields!) m[f.name] = toTypedAttr(Object.hasOwn(v, f.name) ? v[f.name] : null, f, `${where}.${f.name}`);
        return { M: m };
      }
      break;
  }
  throw new SluiceError(
    `column ${where} (${ddlOf(type)}) holds ${JSON.stringify(v).slice(0, 80)}, which is not a ${ddlOf(type)}: make the withColumn function return the type it declares, or declare the type its values have`,
  );
}

/**
 * The value of an N attribute without its column's type: a number, or for an integer beyond
 * ±(2^53 − 1) its digits, as output rows carry a BIGINT there (FORMAT-3). A DOUBLE with such an
 * integral value (below 1e21, which String(v) writes as digits) also reads back as its digits, and
 * a DECIMAL as a number (DynamoDB keeps no trailing zeros): give the column types (fromTypedAttr).
 */
function numberOfAttr(text: string): Json {
  const n = Number(text);
  return Number.isSafeInteger(n) || !/^-?[0-9]+$/.test(text) ? n : text;
}

export function fromAttr(a: AttributeValue): Json {
  if (a.NULL) return null;
  if (a.S !== undefined) return a.S;
  if (a.N !== undefined) return numberOfAttr(a.N);
  if (a.BOOL !== undefined) return a.BOOL;
  if (a.L !== undefined) return a.L.map(fromAttr);
  if (a.M !== undefined) {
    const out: Record<string, Json> = {};
    for (const [k, x] of Object.entries(a.M)) setOwn(out, k, fromAttr(x));
    return out;
  }
  throw new SluiceError(`unexpected DynamoDB attribute type ${Object.keys(a).join(',')}: the item was not written by sluice`);
}

/**
 * The output value an attribute written for `type` holds (toTypedAttr's inverse): a DECIMAL's N
 * back to its text with the type's scale (DynamoDB answers "12.3" for a stored "12.30"), a
 * BIGINT's N to a number when a safe integer and its digits beyond, a DOUBLE's N to a number, at
 * any depth. Without a type, as fromAttr.
 */
function fromTypedAttr(a: AttributeValue, type: OutputColumnType | DataType | undefined): Json {
  if (type === undefined || type === 'WINDOW' || a.NULL) return fromAttr(a);
  if (a.N !== undefined) {
    if (type.type === 'DECIMAL') return decimalOfText(a.N, type.precision ?? 10, type.scale ?? 0) ?? a.N;
    if (type.type === 'LONG') return numberOfAttr(a.N);
    return Number(a.N);
  }
  if (a.L !== undefined && type.type === 'ARRAY') return a.L.map((x) => fromTypedAttr(x, type.element));
  if (a.M !== undefined && (type.type === 'MAP' || type.type === 'STRUCT')) {
    const out: Record<string, Json> = {};
    for (const [k, x] of Object.entries(a.M)) setOwn(out, k, fromTypedAttr(x, type.type === 'MAP' ? type.value : type.fields!.find((f) => f.name === k)));
    return out;
  }
  return fromAttr(a);
}

/** `o[k] = v` as an own property, also for a key such as "__proto__" (a MAP's keys are data). */
function setOwn(o: Record<string, Json>, k: string, v: Json): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

/** A stored item as its row, each attribute read for its column's type when `types` gives it (fromTypedAttr). */
export function fromItem(item: Item, types?: Readonly<Record<string, OutputColumnType>>): DynamoDbSinkItem {
  const row: OutputRow = {};
  for (const [k, v] of Object.entries(item)) {
    if ((RESERVED_ATTRIBUTES as readonly string[]).includes(k)) continue;
    setOwn(row, k, fromTypedAttr(v, types?.[k]));
  }
  return { key: item.sk.S!, batchId: Number(item.batchId?.N ?? -1), queryId: item.queryId?.S ?? '', row };
}

/** AWS's rule for a transactional write: 2 WCU per KB of the item, rounded up. */
export function transactionalWriteUnits(item: Item): number {
  return 2 * Math.max(1, Math.ceil(itemSize(item) / 1024));
}

export function reservedColumn(col: string): InvalidOptionError {
  return new InvalidOptionError(
    `output column \`${col}\` has a name the DynamoDB sink uses itself (${RESERVED_ATTRIBUTES.join(', ')}): rename it in the query, e.g. withColumnRenamed("${col}", "${col}_value")`,
  );
}

export function checkColumns(columns: readonly string[]): void {
  for (const c of columns) if ((RESERVED_ATTRIBUTES as readonly string[]).includes(c)) throw reservedColumn(c);
}

export function checkQueryKey(qk: string): void {
  if (typeof qk !== 'string' || qk === '' || qk.includes('#') || qk.length > 200) {
    throw new InvalidOptionError(
      `DynamoDbSink queryKey ${JSON.stringify(qk)} must be 1 to 200 characters without "#": it names the query's rows in the table, e.g. "orders-per-minute"`,
    );
  }
}

export function checkBatchId(batchId: number): void {
  if (!Number.isSafeInteger(batchId) || batchId < 0) {
    throw new InvalidOptionError(`batch ID ${batchId} is not a non-negative integer: batch IDs count up from 0`);
  }
}

/** The option's value, or its default; InvalidOptionError unless a positive integer. */
export function positiveInt(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value <= 0)
    throw new InvalidOptionError(`DynamoDbSink ${name} (${value}) must be a positive integer: leave it out for ${fallback}`);
  return value;
}

export function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

export function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
