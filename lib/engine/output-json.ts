/**
 * Output rows as JSON text, typed: what the JSON sinks write and how their readers read it back.
 *
 * An output row carries a DECIMAL as its canonical text ("12.30") and a BIGINT beyond 2^53 − 1
 * as its digits (FORMAT-3), so `JSON.stringify` would write both as JSON strings. Spark's JSON
 * writer writes them as numbers, a DECIMAL with its scale (`12.30`, never `12.3`), and so does
 * `jsonLineOf` when it knows the column types: the number's text is written as it is, never
 * through a double. `outputRowOfJson` reads such a line back into the output row it came from,
 * from each number's text (lossless-json), for the same types.
 *
 *     column type      output row value         written          read back
 *     DECIMAL(4,2)     "12.30"                  12.30            "12.30"
 *     BIGINT           "9007199254740993"       9007199254740993 "9007199254740993"
 *     BIGINT           42                       42               42
 *     DATE             "2026-10-01"             "2026-10-01"     "2026-10-01"
 *     ARRAY, MAP,      [..], {..}               JSON, typed at   the same, typed at any depth
 *     STRUCT                                    any depth
 *
 * One difference from Spark: a DECIMAL is always plain text, where Spark (Jackson's
 * BigDecimal.toString) writes an exponent below 10^-6 (`0E-10` for zero at scale 10).
 */
import { isLosslessNumber, parse as parseLossless } from 'lossless-json';
import { decimalOfText } from './decimal';
import { type DataType, holdsType } from './schema';
import type { Json, OutputColumnType, OutputRow } from './ports';

/** Whether some column's values need their number's text written (a DECIMAL or BIGINT at any depth). */
function needsTypedJson(types: Readonly<Record<string, OutputColumnType>> | undefined): boolean {
  return types !== undefined && Object.values(types).some((t) => t !== 'WINDOW' && hasExactNumber(t));
}

function hasExactNumber(t: DataType): boolean {
  return holdsType(t, (x) => x.type === 'DECIMAL' || x.type === 'LONG');
}

/**
 * One output row as a JSON line: `JSON.stringify(row)`, except that a DECIMAL and a BIGINT given
 * as text are written as JSON numbers (their text as it is), at any depth, when `types` says so.
 */
export function jsonLineOf(row: OutputRow, types: Readonly<Record<string, OutputColumnType>> | undefined): string {
  if (!needsTypedJson(types)) return JSON.stringify(row);
  let out = '';
  for (const key of Object.keys(row)) {
    const v = row[key];
    if (v === undefined) continue;
    out += `${out === '' ? '' : ','}${JSON.stringify(key)}:${jsonOf(v, types![key])}`;
  }
  return `{${out}}`;
}

function jsonOf(v: Json, t: OutputColumnType | DataType | undefined): string {
  if (v === null || t === undefined || t === 'WINDOW') return JSON.stringify(v);
  switch (t.type) {
    case 'DECIMAL':
      // the canonical text of a value of its type is a JSON number as it is
      if (typeof v === 'string' && decimalOfText(v, t.precision ?? 10, t.scale ?? 0) === v) return v;
      break;
    case 'LONG':
      if (typeof v === 'string' && /^-?[0-9]+$/.test(v)) return v;
      break;
    case 'ARRAY':
      if (Array.isArray(v)) return `[${v.map((e) => jsonOf(e, t.element)).join(',')}]`;
      break;
    case 'MAP':
    case 'STRUCT':
      if (typeof v === 'object' && !Array.isArray(v)) {
        const parts: string[] = [];
        for (const key of Object.keys(v)) {
          if (v[key] === undefined) continue;
          const inner = t.type === 'MAP' ? t.value : t.fields!.find((f) => f.name === key);
          parts.push(`${JSON.stringify(key)}:${jsonOf(v[key], inner)}`);
        }
        return `{${parts.join(',')}}`;
      }
      break;
  }
  return JSON.stringify(v);
}

/**
 * The output row a JSON line written by `jsonLineOf` holds, with the same `types`: each number
 * read from its text, a DECIMAL back to its canonical text (its scale), a BIGINT to a number when
 * a safe integer and its digits beyond, a DOUBLE or INT to a number. Columns without a type are
 * read as JSON.parse reads them.
 */
export function outputRowOfJson(line: string, types: Readonly<Record<string, OutputColumnType>>): Json {
  const parsed = parseLossless(line) as unknown;
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return plain(parsed);
  const row: Record<string, Json> = {};
  for (const [k, v] of Object.entries(parsed)) row[k] = typed(v, types[k]);
  return row;
}

function typed(v: unknown, t: OutputColumnType | DataType | undefined): Json {
  if (t === undefined || t === 'WINDOW' || v === null) return plain(v);
  if (isLosslessNumber(v)) {
    if (t.type === 'DECIMAL') return decimalOfText(v.value, t.precision ?? 10, t.scale ?? 0) ?? v.value;
    if (t.type === 'LONG') return exactInteger(v.value);
    return Number(v.value);
  }
  if (t.type === 'ARRAY' && Array.isArray(v)) return v.map((e) => typed(e, t.element));
  if ((t.type === 'MAP' || t.type === 'STRUCT') && typeof v === 'object' && !Array.isArray(v)) {
    const out: Record<string, Json> = {};
    for (const [k, x] of Object.entries(v as object)) {
      Object.defineProperty(out, k, {
        value: typed(x, t.type === 'MAP' ? t.value : t.fields!.find((f) => f.name === k)),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return plain(v);
}

/** A BIGINT's text as an output row holds it: a number when a safe integer, else its digits. */
function exactInteger(text: string): Json {
  const n = Number(text);
  return Number.isSafeInteger(n) || !/^-?[0-9]+$/.test(text) ? n : text;
}

/** A lossless-json value as JSON.parse would have read it (numbers as doubles). */
function plain(v: unknown): Json {
  if (isLosslessNumber(v)) return Number(v.value);
  if (v === null || typeof v !== 'object') return v as Json;
  if (Array.isArray(v)) return v.map(plain);
  const out: Record<string, Json> = {};
  for (const [k, x] of Object.entries(v)) Object.defineProperty(out, k, { value: plain(x), enumerable: true, writable: true, configurable: true });
  return out;
}
