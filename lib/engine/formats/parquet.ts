/**
 * Parquet files, read with hyparquet (a maintained pure-JS reader; no native code in the Lambda).
 * Columns are matched by name (exactly, else ignoring case, as Spark with caseSensitive=false); a
 * declared column the file lacks is null, as in Spark. Values keep their exactness:
 *
 *     DECIMAL    hyparquet turns it into a double, so the DECIMAL annotation is taken off the
 *                metadata it reads with, and the unscaled integer (INT32, INT64 or big-endian
 *                two's complement bytes) is read here, exact, at the file's scale
 *     TIMESTAMP  the raw micros (millis, nanos, INT96) become ISO text parsed by timestamps.ts
 *     DATE       days since the epoch, through dates.ts
 *     nested     LIST, MAP and groups as hyparquet assembles them, typed field by field
 *
 * A file whose column type cannot be read as the declared type (a STRING for an INT, a DECIMAL of
 * a larger scale, a group for a scalar) is refused whole: one dead letter naming the file, the
 * column, both types and the fix, since every row of it would fail the same way. A value that
 * does not fit (an INT64 beyond an INT, a DECIMAL beyond its precision) makes its row a dead
 * letter, located by its row number in the file (`line`).
 */
import { setEntry } from '../map-entries';
import { parquetMetadata, parquetReadObjects, parquetSchema } from 'hyparquet';
import type { FileMetaData, SchemaTree } from 'hyparquet';
import { dateOfEpochDay } from '../dates';
import { ddlOf } from '../ddl';
import { resolveName } from '../resolve-name';
import { fitsPrecision, formatDecimal, rescale } from '../decimal';
import type { ReadResult, Row } from '../ports';
import { type Column, type DataType, canonicalLong, type Schema } from '../schema';
import { parseTimestamp } from '../timestamps';
import { ChunkBuilder } from '../lines';
import { keepOnly } from './csv';
import { BadText } from './text-values';

/** A raw time value from hyparquet's parsers, converted here. */
class RawTime {
  constructor(
    readonly unit: 'ms' | 'us' | 'ns' | 'days',
    readonly value: bigint | number,
  ) {}
}

const PARSERS = {
  timestampFromMilliseconds: (v: bigint) => new RawTime('ms', v),
  timestampFromMicroseconds: (v: bigint) => new RawTime('us', v),
  timestampFromNanoseconds: (v: bigint) => new RawTime('ns', v),
  dateFromDays: (v: number) => new RawTime('days', v),
};

function fileType(node: SchemaTree): string {
  const e = node.element;
  if (node.children.length) return e.converted_type === 'LIST' ? 'LIST' : e.converted_type === 'MAP' ? 'MAP' : 'group';
  const ann = e.converted_type === 'DECIMAL' ? `DECIMAL(${e.precision},${e.scale ?? 0})` : (e.logical_type?.type ?? e.converted_type);
  return ann ? `${e.type} ${ann}` : String(e.type);
}

function listElement(node: SchemaTree): SchemaTree {
  const rep = node.children[0];
  return rep.children.length === 1 ? rep.children[0] : rep;
}

function child(node: SchemaTree, name: string): SchemaTree | undefined {
  return resolveName(node.children, name, (c) => c.element.name);
}

/** Why the file's column cannot be read as `t` (null: it can). */
function mismatch(t: DataType, node: SchemaTree): string | null {
  const e = node.element;
  const ct = e.converted_type;
  const lt = e.logical_type?.type;
  const leaf = node.children.length === 0;
  const plainInt =
    leaf && (e.type === 'INT32' || e.type === 'INT64') && ct !== 'DECIMAL' && ct !== 'DATE' && lt !== 'DATE' && lt !== 'TIMESTAMP' && !ct?.startsWith('TIME');
  const no = `the file's ${fileType(node)} cannot be read as ${ddlOf(t)}`;
  switch (t.type) {
    case 'STRING':
      return leaf && e.type === 'BYTE_ARRAY' && ct !== 'DECIMAL' ? null : no;
    case 'BOOLEAN':
      return leaf && e.type === 'BOOLEAN' ? null : no;
    case 'INT':
      return plainInt && e.type === 'INT32' ? null : no;
    case 'LONG':
      return plainInt ? null : no;
    case 'DOUBLE':
      return leaf && (e.type === 'DOUBLE' || e.type === 'FLOAT') ? null : no;
    case 'DECIMAL': {
      if (leaf && ct === 'DECIMAL') {
        const fs = e.scale ?? 0;
        const fp = e.precision ?? 0;
        return fs <= (t.scale ?? 0) && fp - fs <= (t.precision ?? 10) - (t.scale ?? 0)
          ? null
          : `${no} without losing digits (declare at least DECIMAL(${fp},${fs}))`;
      }
      return no;
    }
    case 'DATE':
      return leaf && (ct === 'DATE' || lt === 'DATE') ? null : no;
    case 'TIMESTAMP':
      return leaf && (ct === 'TIMESTAMP_MICROS' || ct === 'TIMESTAMP_MILLIS' || lt === 'TIMESTAMP' || e.type === 'INT96') ? null : no;
    case 'ARRAY':
      return !leaf && ct === 'LIST' ? mismatch(t.element!, listElement(node)) : no;
    case 'MAP': {
      if (leaf || ct !== 'MAP') return no;
      const kv = node.children[0];
      const key = child(kv, 'key');
      const value = child(kv, 'value');
      if (!key || !value) return no;
      return mismatch({ type: 'STRING' }, key) ?? mismatch(t.value!, value);
    }
    case 'STRUCT': {
      if (leaf || ct === 'LIST' || ct === 'MAP') return no;
      for (const f of t.fields!) {
        const c = child(node, f.name);
        const m = c ? mismatch(f, c) : null;
        if (m) return `field ${f.name}: ${m}`;
      }
      return null;
    }
    default:
      return no;
  }
}

function unscaledOfRaw(v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return BigInt(v);
  const bytes = v as Uint8Array;
  let u = 0n;
  for (const b of bytes) u = (u << 8n) | BigInt(b);
  // two's complement: the top bit of the first byte is the sign
  if (bytes.length && bytes[0] & 0x80) u -= 1n << BigInt(bytes.length * 8);
  return u;
}

const pad = (n: bigint, w: number) => n.toString().padStart(w, '0');

function timestampOfRaw(r: RawTime): unknown {
  const v = BigInt(r.value);
  const perSecond = r.unit === 'ms' ? 1000n : r.unit === 'us' ? 1_000_000n : 1_000_000_000n;
  let sec = v / perSecond;
  let frac = v % perSecond;
  if (frac < 0n) {
    frac += perSecond;
    sec -= 1n;
  }
  const micros = r.unit === 'ms' ? frac * 1000n : r.unit === 'us' ? frac : frac / 1000n;
  const d = new Date(Number(sec) * 1000);
  if (Number.isNaN(d.getTime())) return null;
  return parseTimestamp(`${d.toISOString().slice(0, 19)}.${pad(micros, 6)}Z`);
}

function bad(t: DataType, path: string, v: unknown, rule: string): never {
  throw new BadText(`column ${path} (${ddlOf(t)}): ${String(v)} ${rule}`);
}

/** A value as hyparquet gives it, typed as `t` (the file's type already checked by mismatch). */
function typed(t: DataType, node: SchemaTree, v: unknown, path: string): unknown {
  if (v === null || v === undefined) return null;
  switch (t.type) {
    case 'STRING':
      return typeof v === 'string' ? v : Buffer.from(v as Uint8Array).toString('utf8');
    case 'INT': {
      const n = Number(v);
      const lim = t.bits === 8 ? 128 : t.bits === 16 ? 32768 : 2 ** 31;
      if (n < -lim || n >= lim) bad(t, path, v, `is out of the ${ddlOf(t)} range: declare the column wider`);
      return n;
    }
    case 'LONG':
      return typeof v === 'bigint' ? canonicalLong(v) : v;
    case 'DOUBLE':
      return t.binary32 ? Math.fround(Number(v)) : Number(v);
    case 'BOOLEAN':
      return Boolean(v);
    case 'DECIMAL': {
      const u = rescale(unscaledOfRaw(v), node.element.scale ?? 0, t.scale ?? 0);
      if (!fitsPrecision(u, t.precision ?? 10))
        bad(t, path, formatDecimal(u, t.scale ?? 0), `has more than ${t.precision ?? 10} digits: declare a wider DECIMAL`);
      return formatDecimal(u, t.scale ?? 0);
    }
    case 'DATE':
      return v instanceof RawTime ? dateOfEpochDay(Number(v.value)) : bad(t, path, v, 'is not a date');
    case 'TIMESTAMP': {
      const ts = v instanceof RawTime ? timestampOfRaw(v) : null;
      if (ts === null) bad(t, path, v, "is outside Spark's TIMESTAMP range (years 1 to 9999)");
      return ts;
    }
    case 'ARRAY': {
      const el = listElement(node);
      return (v as unknown[]).map((x, i) => typed(t.element!, el, x, `${path}[${i}]`));
    }
    case 'MAP': {
      // read without its annotation (decodeParquet): the key-value group's entries in the file's order
      const value = child(node.children[0], 'value')!;
      const entries = (v as Record<string, unknown>)[node.children[0].element.name];
      const out: Record<string, unknown> = {};
      for (const e of Array.isArray(entries) ? (entries as Array<Record<string, unknown>>) : []) {
        const k = String(e.key);
        setEntry(out, k, typed(t.value!, value, e.value ?? null, `${path}.${k}`));
      }
      return out;
    }
    case 'STRUCT': {
      const out: Record<string, unknown> = {};
      const o = v as Record<string, unknown>;
      for (const f of t.fields!) {
        const c = child(node, f.name);
        out[f.name] = c ? typed(f, c, o[c.element.name], `${path}.${f.name}`) : null;
      }
      return out;
    }
    default:
      return bad(t, path, v, 'cannot be read');
  }
}

const rawText = (row: unknown): string =>
  JSON.stringify(row, (_k, x) =>
    typeof x === 'bigint' ? x.toString() : x instanceof RawTime ? `${x.value}${x.unit}` : x instanceof Uint8Array ? Buffer.from(x).toString('hex') : x,
  );

/**
 * A schema element as hyparquet should assemble it. It reads a DECIMAL through a double: without
 * the annotation it gives the unscaled integer. It makes a MAP a JS object, which lists
 * integer-like keys first (`{"b":1,"10":2}` as 10, b): without the annotation it gives the
 * key-value group's entries in the file's order, which `typed` makes the map (map-entries.ts).
 */
function unannotated(e: FileMetaData['schema'][number]): FileMetaData['schema'][number] {
  if (e.converted_type === 'DECIMAL') return { ...e, converted_type: undefined };
  if (e.converted_type === 'MAP' || e.converted_type === 'MAP_KEY_VALUE' || e.logical_type?.type === 'MAP')
    return { ...e, converted_type: undefined, logical_type: undefined };
  return e;
}

/** A Parquet file's rows (every declared column, by name) and dead letters. */
export async function* decodeParquet(schema: Schema, file: string, buf: Uint8Array, bytes: number, keep?: readonly string[]): AsyncGenerator<ReadResult> {
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
  const refuse = (reason: string): ReadResult => ({ rows: [], deadLetters: [{ source: { file }, raw: '', reason }], bytes });
  let metadata: FileMetaData;
  try {
    metadata = parquetMetadata(ab);
  } catch (e) {
    yield refuse(`the file is not Parquet (${(e as Error).message}): write Parquet files under this prefix, or read it with its own format`);
    return;
  }
  const tree = parquetSchema(metadata);
  const nodes = new Map<string, SchemaTree>();
  for (const col of schema.columns) {
    const node = child(tree, col.name);
    if (!node) continue;
    const m = mismatch(col, node);
    if (m) {
      yield refuse(
        `Parquet column ${node.element.name}: ${m} (column ${col.name} is declared ${ddlOf(col)}): declare the column with the file's type, or rewrite the file`,
      );
      return;
    }
    nodes.set(col.name, node);
  }
  const raw: FileMetaData = { ...metadata, schema: metadata.schema.map(unannotated) };
  let objects: Array<Record<string, unknown>>;
  try {
    objects = await parquetReadObjects({ file: ab, metadata: raw, utf8: false, parsers: PARSERS });
  } catch (e) {
    yield refuse(`the Parquet file cannot be read (${(e as Error).message}): rewrite it, or remove it from the prefix`);
    return;
  }
  const out = new ChunkBuilder(bytes);
  for (let i = 0; i < objects.length; i++) {
    const o = objects[i];
    const row: Row = {};
    let reason: string | null = null;
    try {
      for (const col of schema.columns as readonly Column[]) {
        const node = nodes.get(col.name);
        row[col.name] = node ? typed(col, node, o[node.element.name], col.name) : null;
      }
    } catch (e) {
      if (!(e instanceof BadText)) throw e;
      reason = e.reason;
    }
    if (reason === null) out.rows.push(keep ? keepOnly(row, keep) : row);
    else {
      const before = out.dead({ source: { file, line: i + 1 }, raw: rawText(o), reason });
      if (before !== null) yield before;
    }
    const full = out.full();
    if (full !== null) yield full;
  }
  yield out.take();
}
