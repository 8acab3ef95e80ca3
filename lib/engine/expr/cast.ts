/**
 * CAST between types with Spark 4's ANSI rules (Cast.canAnsiCast and its evaluation): which casts
 * are allowed, and per value the ANSI errors — CAST_INVALID_INPUT for text that is not a value of
 * the target, CAST_OVERFLOW for a number outside an integral type, NUMERIC_VALUE_OUT_OF_RANGE for
 * a DECIMAL that needs more digits. `try_cast` (and the `try` mode) returns null instead.
 */
import { fitsPrecision, float32OfText, formatDecimal, javaDigits, rescale, unscaledOf, unscaledOfText } from '../decimal';
import { dateOfText as readDateText } from '../formats/date-text';
import { nullOnRowError, SparkRowError } from './errors';
import { bigMicros, dateOfMicros, formatTimestampText, inRange, type Micros, microsOfDate, microsValue, parseTimestampMicros } from './time';
import { intervalText, lastFieldMicros, yearMonthCount } from './interval-text';
import { keyText, keyTypeOf, keyValue } from './map-keys';
import { mapEntries, setEntry } from '../map-entries';
import { isNumeric, sameType, type SqlType, typeName } from './types';
import { big, javaDoubleText, LONG_MAX, LONG_MIN, longValue, outOfRange } from './values';

/** Whether Spark (ANSI) casts `from` to `to`. */
export function canCast(from: SqlType, to: SqlType): boolean {
  const f = from.type;
  const t = to.type;
  if (f === 'NULL' || (f === t && f !== 'ARRAY' && f !== 'MAP' && f !== 'STRUCT')) return true;
  if (t === 'STRING') return true;
  if (f === 'STRING') return t !== 'ARRAY' && t !== 'MAP' && t !== 'STRUCT' && t !== 'INTERVAL';
  const num = (x: SqlType) => isNumeric(x);
  if (num(from) && num(to)) return true;
  if (f === 'BOOLEAN') return num(to);
  if (t === 'BOOLEAN') return num(from);
  if (f === 'TIMESTAMP') return num(to) || t === 'DATE';
  // a day-time INTERVAL casts to a number of its last unit, as Spark's ANSI interval casts: an
  // INTERVAL DAY to days, a DAY TO SECOND (a TIMESTAMP difference) to seconds
  if (f === 'INTERVAL') return t === 'INT' || t === 'LONG' || t === 'DECIMAL';
  if (t === 'TIMESTAMP') return num(from) || f === 'DATE';
  if (f === 'ARRAY' && t === 'ARRAY') return canCast(from.element!, to.element!);
  if (f === 'MAP' && t === 'MAP') return canCast(keyTypeOf(from), keyTypeOf(to)) && canCast(from.value!, to.value!);
  if (f === 'STRUCT' && t === 'STRUCT') return from.fields!.length === to.fields!.length && from.fields!.every((x, i) => canCast(x, to.fields![i]));
  return false;
}

/** A value as Spark's error messages print it (toSQLValue: a literal's SQL, 1.0E20D, 5L, 7S, 1.50BD; a FLOAT and a non-finite DOUBLE bare). */
/** Whether Spark's non-ANSI Cast.canCast takes the pair: the ANSI casts, and DATE or TIMESTAMP to BOOLEAN, BOOLEAN to TIMESTAMP, DATE to a number (nested types element by element). */
function legacyCanCast(from: SqlType, to: SqlType): boolean {
  if (canCast(from, to)) return true;
  const f = from.type;
  const t = to.type;
  if ((f === 'DATE' || f === 'TIMESTAMP') && t === 'BOOLEAN') return true;
  if ((f === 'BOOLEAN' && t === 'TIMESTAMP') || (f === 'DATE' && isNumeric(to))) return true;
  if (f === 'ARRAY' && t === 'ARRAY') return legacyCanCast(from.element!, to.element!);
  if (f === 'MAP' && t === 'MAP') return legacyCanCast(keyTypeOf(from), keyTypeOf(to)) && legacyCanCast(from.value!, to.value!);
  if (f === 'STRUCT' && t === 'STRUCT') return from.fields!.length === to.fields!.length && from.fields!.every((x, i) => legacyCanCast(x, to.fields![i]));
  return false;
}

/**
 * The DATATYPE_MISMATCH subclass and text of a CAST that canCast refuses, as Spark's
 * Cast.typeCheckFailureMessage picks it: between DATE and a number, the functions that convert
 * (CAST_WITH_FUNC_SUGGESTION); a cast the non-ANSI rules would take, the setting
 * (CAST_WITH_CONF_SUGGESTION, not for try_cast); otherwise CAST_WITHOUT_SUGGESTION.
 */
export function castRefusal(from: SqlType, to: SqlType, safe: boolean): { subclass: string; text: string } {
  const pair = `"${typeName(from)}" to "${typeName(to)}"`;
  if (isNumeric(from) && to.type === 'DATE') {
    return { subclass: 'CAST_WITH_FUNC_SUGGESTION', text: `cannot cast ${pair}; to read a number of days as a DATE, use \`DATE_FROM_UNIX_DATE\`` };
  }
  if (from.type === 'DATE' && isNumeric(to)) {
    return { subclass: 'CAST_WITH_FUNC_SUGGESTION', text: `cannot cast ${pair}; for the number of days since 1970-01-01, use \`UNIX_DATE\`` };
  }
  if (!safe && legacyCanCast(from, to)) {
    return { subclass: 'CAST_WITH_CONF_SUGGESTION', text: `cannot cast ${pair} with ANSI mode on (only "spark.sql.ansi.enabled" = "false" allows it)` };
  }
  return { subclass: 'CAST_WITHOUT_SUGGESTION', text: `cannot cast ${pair}` };
}

function sqlText(v: unknown, from: SqlType): string {
  if (from.type === 'STRING') return `'${v}'`;
  if (from.type === 'DOUBLE') {
    const text = javaDoubleText(v as number, from.binary32);
    return from.binary32 || !Number.isFinite(v as number) ? text : `${text}D`;
  }
  if (from.type === 'TIMESTAMP') return `TIMESTAMP '${formatTimestampText(v as Micros)}'`;
  if (from.type === 'DATE') return `DATE '${v}'`;
  if (from.type === 'LONG') return `${v}L`;
  if (from.type === 'INT') return from.bits === 8 ? `${v}Y` : from.bits === 16 ? `${v}S` : String(v);
  if (from.type === 'DECIMAL') return `${v}BD`;
  if (from.type === 'INTERVAL') return intervalText(v as number, from);
  return String(v);
}

function invalid(v: unknown, from: SqlType, to: SqlType): SparkRowError {
  return new SparkRowError(
    'CAST_INVALID_INPUT',
    `The value ${sqlText(v, from)} of the type "${typeName(from)}" cannot be cast to "${typeName(to)}" because it is malformed. Correct the value as per the syntax, or change its target type. Use \`try_cast\` to tolerate malformed input and return NULL instead.`,
  );
}

function castOverflow(v: unknown, from: SqlType, to: SqlType): SparkRowError {
  return new SparkRowError(
    'CAST_OVERFLOW',
    `The value ${sqlText(v, from)} of the type "${typeName(from)}" cannot be cast to "${typeName(to)}" due to an overflow. Use \`try_cast\` to tolerate overflow and return NULL instead.`,
  );
}

/** Spark's outOfDecimalTypeRangeError: a text whose integer part has more digits than any DECIMAL holds. */
function unsupportedRange(text: string): SparkRowError {
  return new SparkRowError(
    'NUMERIC_OUT_OF_SUPPORTED_RANGE',
    `The value ${text} cannot be read as a number: its integer part has more than ${MAX_DECIMAL_DIGITS} digits. Use \`try_cast\` to get NULL instead.`,
  );
}

const MAX_DECIMAL_DIGITS = 38;
/** Java's BigDecimal(String) grammar: sign, digits with an optional point, an optional exponent. */
const DECIMAL_TEXT = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$/;

/**
 * Whether Java's BigDecimal(String) takes the exponent of a DECIMAL_TEXT match: parseExp refuses
 * more than 10 digits past its leading zeros, and the exponent and the scale it makes (the fraction
 * digits less the exponent) must each be an int; else a NumberFormatException (CAST_INVALID_INPUT).
 */
function javaExponentFits(m: RegExpExecArray): boolean {
  const [, , , frac = '', exp] = m;
  if (exp === undefined) return true;
  const digits = exp.replace(/^[+-]?0*/, '');
  if (digits.length > 10) return false;
  const e = Number(exp);
  const scale = frac.length - e;
  return e >= -(2 ** 31) && e < 2 ** 31 && scale >= -(2 ** 31) && scale < 2 ** 31;
}

/** BigDecimal's precision − scale of a DECIMAL_TEXT match: the digits before the point once written out (zero: 1 − scale). */
function integralDigits(m: RegExpExecArray): number {
  const [, , int, frac = '', exp] = m;
  const digits = `${int}${frac}`.replace(/^0+/, '');
  return Math.max(digits.length, 1) - (frac.length - Number(exp ?? 0));
}

const INTEGER_TEXT = /^[+-]?[0-9]+$/;
const DOUBLE_TEXT = /^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[dDfF]?$/;
const SPECIAL_DOUBLES: Record<string, number> = {
  nan: Number.NaN,
  infinity: Number.POSITIVE_INFINITY,
  '+infinity': Number.POSITIVE_INFINITY,
  inf: Number.POSITIVE_INFINITY,
  '+inf': Number.POSITIVE_INFINITY,
  '-infinity': Number.NEGATIVE_INFINITY,
  '-inf': Number.NEGATIVE_INFINITY,
};

const HEX_DOUBLE = /^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?[0-9]+)[fFdD]?$/;

/** Java's parseDouble of a hexadecimal floating-point text (`0x1.8p1` is 3.0; the binary exponent is required), or null. */
function hexDouble(text: string): number | null {
  const m = HEX_DOUBLE.exec(text);
  if (m === null || (m[2] === '' && (m[3] ?? '') === '')) return null;
  const [, sign, int, frac = '', exp] = m;
  let x = Number(BigInt(`0x${int}${frac}`));
  // scale by 2^(exponent − 4 × fraction digits) in steps that stay finite
  for (let k = Math.max(-2000, Math.min(2000, Number(exp))) - 4 * frac.length; k !== 0; ) {
    const step = Math.max(-1000, Math.min(1000, k));
    x *= 2 ** step;
    k -= step;
  }
  return sign === '-' ? -x : x;
}

/** Java's String.trim, as Spark's STRING to DOUBLE (parseDouble): every character up to U+0020 off both ends. */
function javaTrim(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && s.charCodeAt(a) <= 0x20) a++;
  while (b > a && s.charCodeAt(b - 1) <= 0x20) b--;
  return s.slice(a, b);
}

/** UTF8String.trimAll, as Spark's STRING to an integral type and its interval strings: characters up to U+0020 and U+007F (DEL) off both ends. */
export function trimAll(s: string): string {
  const off = (c: number) => c <= 0x20 || c === 0x7f;
  let a = 0;
  let b = s.length;
  while (a < b && off(s.charCodeAt(a))) a++;
  while (b > a && off(s.charCodeAt(b - 1))) b--;
  return s.slice(a, b);
}

const LONG_MAX_VALUE = longValue(2n ** 63n - 1n);

/** The range of an integral type as bigints. */
function integralRange(t: SqlType): [bigint, bigint] {
  if (t.type === 'LONG') return [LONG_MIN, LONG_MAX];
  const bits = t.bits ?? 32;
  const m = 2n ** BigInt(bits - 1);
  return [-m, m - 1n];
}

/**
 * Spark's stringToDate (CAST(s AS DATE), DATE '...'): the readers' rule (formats/date-text.ts), so
 * a sign and a year of 4 to 7 digits are read as Spark reads them ('+2026-10-01', '02026-10-01').
 */
export function dateOfText(text: string): string | null {
  return readDateText(text);
}

/** A value of `from` (non-null) as a value of `to`. `safe` (try_cast) returns null where ANSI throws. */
export function castFunction(from: SqlType, to: SqlType, safe: boolean): (v: unknown) => unknown {
  const f = castUnsafe(from, to);
  return safe ? nullOnRowError(f) : f;
}

/** A cast from STRING by `parse`: a text it does not read (null) is the row's CAST_INVALID_INPUT. */
function fromText(parse: (text: string) => unknown, from: SqlType, to: SqlType): (v: unknown) => unknown {
  return (v) => {
    const out = parse(v as string);
    if (out === null) throw invalid(v, from, to);
    return out;
  };
}

function castUnsafe(from: SqlType, to: SqlType): (v: unknown) => unknown {
  const f = from.type;
  const t = to.type;
  if (f === 'NULL') return () => null;
  switch (t) {
    case 'STRING':
      return toStringFn(from);
    case 'BOOLEAN':
      if (f === 'BOOLEAN') return (v) => v;
      if (f === 'STRING') {
        return (v) => {
          // StringUtils.isTrueString / isFalseString: trimAll (blanks and controls up to U+0020, DEL), then lower case
          const s = trimAll(v as string).toLowerCase();
          if (s === 't' || s === 'true' || s === 'y' || s === 'yes' || s === '1') return true;
          if (s === 'f' || s === 'false' || s === 'n' || s === 'no' || s === '0') return false;
          throw invalid(v, from, to);
        };
      }
      if (f === 'DECIMAL') return (v) => unscaledOf(v as string) !== 0n;
      return (v) => v !== 0 && v !== 0n;
    case 'INT':
    case 'LONG': {
      const [lo, hi] = integralRange(to);
      const fitRange = (n: bigint, v: unknown) => {
        if (n < lo || n > hi) throw castOverflow(v, from, to);
        return t === 'LONG' ? longValue(n) : Number(n);
      };
      if (f === 'INT' || f === 'LONG') {
        if (t === 'LONG') return (v) => v;
        if ((to.bits ?? 32) >= (from.type === 'INT' ? (from.bits ?? 32) : 64)) return (v) => v;
        return (v) => fitRange(big(v), v);
      }
      if (f === 'BOOLEAN') return (v) => (v ? 1 : 0);
      if (f === 'INTERVAL') {
        // IntervalUtils.yearMonthIntervalToInt: the months, or whole years when YEAR is the last field
        if (from.yearMonth) return (v) => fitRange(BigInt(yearMonthCount(v as number, from)), v);
        // IntervalUtils.dayTimeIntervalToLong: the microseconds divided by the last field's, truncated toward zero
        const unit = lastFieldMicros(from);
        return (v) => fitRange(BigInt(v as number) / unit, v);
      }
      if (f === 'STRING') {
        return (v) => {
          const s = trimAll(v as string);
          if (!INTEGER_TEXT.test(s)) throw invalid(v, from, to);
          const n = BigInt(s);
          if (n < lo || n > hi) throw invalid(v, from, to);
          return t === 'LONG' ? longValue(n) : Number(n);
        };
      }
      if (f === 'DOUBLE') {
        return (v) => {
          const d = v as number;
          if (!Number.isFinite(d)) throw castOverflow(v, from, to);
          const n = Math.trunc(d) + 0; // (+ 0: -0.5 truncates to -0, Java's (int) to 0)
          if (t === 'INT' && (n < Number(lo) || n > Number(hi))) throw castOverflow(v, from, to);
          // Spark compares with Long.MaxValue as a double (2^63): 2^63 itself passes and saturates, as Java's (long)
          if (t === 'LONG' && (n < -(2 ** 63) || n > 2 ** 63)) throw castOverflow(v, from, to);
          if (t === 'LONG' && n === 2 ** 63) return LONG_MAX_VALUE;
          return t === 'LONG' ? (Number.isSafeInteger(n) ? n : longValue(BigInt(n))) : n;
        };
      }
      if (f === 'DECIMAL') {
        const s = from.scale!;
        if (t === 'INT' && from.precision! > 18) {
          // Spark's Decimal.roundToInt/Short/Byte of a Decimal held as a BigDecimal, as every DECIMAL of
          // more than 18 digits is read from a row: its doubleValue, range-checked by floor and ceil, then
          // truncated. So 9.99999999999999999999 is 10 (the double is 10.0), and 2147483647.99999999999
          // overflows an INT (BIGINT's roundToLong is exact: the BigInteger's longValueExact)
          const [lo, hi] = integralRange(to);
          return (v) => {
            const d = Number(v);
            if (Math.floor(d) > Number(hi) || Math.ceil(d) < Number(lo)) throw castOverflow(v, from, to);
            return Math.trunc(d) + 0;
          };
        }
        return (v) => fitRange(unscaledOf(v as string) / 10n ** BigInt(s), v); // truncates toward zero, as Spark
      }
      if (f === 'TIMESTAMP') {
        return (v) => {
          const b = bigMicros(v as Micros);
          const secs = b / 1_000_000n - (b % 1_000_000n < 0n ? 1n : 0n); // floor, as Spark's floorDiv
          return fitRange(secs, v);
        };
      }
      break;
    }
    case 'DOUBLE': {
      const round = to.binary32 ? Math.fround : (x: number) => x;
      // a FLOAT from an exact text (a DECIMAL, a BIGINT past 2^53, a STRING) is its nearest float
      // (Java's BigDecimal.floatValue, (float) of a long, Float.parseFloat): not fround of the nearest
      // double, which rounds twice (float32OfText)
      const roundText = to.binary32 ? float32OfText : Number;
      if (f === 'DOUBLE') return to.binary32 && !from.binary32 ? (v) => Math.fround(v as number) : (v) => v;
      if (f === 'INT' || f === 'LONG') return (v) => (typeof v === 'bigint' ? roundText(String(v)) : round(Number(v)));
      if (f === 'BOOLEAN') return (v) => (v ? 1 : 0);
      if (f === 'DECIMAL') return (v) => roundText(v as string);
      if (f === 'TIMESTAMP') return (v) => round(Number(v) / 1_000_000); // (Spark: the seconds as a double, then .toFloat)
      if (f === 'STRING') {
        return (v) => {
          const s = javaTrim(v as string);
          // Java's parseDouble reads a signed NaN ('+NaN', '-NaN'; case-sensitive), then Spark's special words
          if (s === '+NaN' || s === '-NaN') return Number.NaN;
          const special = SPECIAL_DOUBLES[s.toLowerCase()];
          if (special !== undefined) return special;
          if (!DOUBLE_TEXT.test(s)) {
            const hex = hexDouble(s);
            if (hex === null) throw invalid(v, from, to);
            return round(hex);
          }
          return roundText(s.replace(/[dDfF]$/, ''));
        };
      }
      break;
    }
    case 'DECIMAL': {
      const p = to.precision!;
      const s = to.scale!;
      const fitRange = (u: bigint) => {
        if (!fitsPrecision(u, p)) throw outOfRange(u, s, to, `CAST to ${typeName(to)}`);
        return formatDecimal(u, s);
      };
      if (f === 'DECIMAL') return (v) => fitRange(rescale(unscaledOf(v as string), from.scale!, s));
      if (f === 'INT' || f === 'LONG') return (v) => fitRange(rescale(big(v), 0, s));
      if (f === 'BOOLEAN') return (v) => fitRange(rescale(v ? 1n : 0n, 0, s));
      if (f === 'DOUBLE') {
        return (v) => {
          const d = v as number;
          // Spark's castToDecimal catches BigDecimal's NumberFormatException: NaN and ±Infinity are NULL, even under ANSI
          if (!Number.isFinite(d)) return null;
          // Spark reads a double into a decimal through its shortest text (Scala's BigDecimal(double))
          return fitRange(unscaledOfText(String(d), s)!);
        };
      }
      if (f === 'STRING') {
        return (v) => {
          // Decimal.fromStringANSI: Java's BigDecimal of the text after String.trim (digits of any script)
          const text = javaDigits(javaTrim(v as string));
          const m = DECIMAL_TEXT.exec(text);
          if (m === null || (m[2] === '' && (m[3] ?? '') === '') || !javaExponentFits(m)) throw invalid(v, from, to);
          if (integralDigits(m) > MAX_DECIMAL_DIGITS) throw unsupportedRange(v as string);
          const u = unscaledOfText(text, s);
          if (u === null) throw invalid(v, from, to);
          return fitRange(u);
        };
      }
      if (f === 'TIMESTAMP') return (v) => fitRange(rescale(bigMicros(v as Micros), 6, s));
      // dayTimeIntervalToDecimal: the exact seconds (scale 6) when the last field is SECOND, else the whole last fields
      if (f === 'INTERVAL' && from.yearMonth) return (v) => fitRange(rescale(BigInt(yearMonthCount(v as number, from)), 0, s));
      if (f === 'INTERVAL') {
        const unit = lastFieldMicros(from);
        if (unit === 1_000_000n) return (v) => fitRange(rescale(BigInt(v as number), 6, s));
        return (v) => fitRange(rescale(BigInt(v as number) / unit, 0, s));
      }
      break;
    }
    case 'DATE':
      if (f === 'DATE') return (v) => v;
      if (f === 'TIMESTAMP') return (v) => dateOfMicros(v as Micros);
      if (f === 'STRING') return fromText(dateOfText, from, to);
      break;
    case 'TIMESTAMP': {
      const within = (u: bigint, v: unknown) => {
        if (!inRange(u)) throw castOverflow(v, from, to);
        return microsValue(u);
      };
      if (f === 'TIMESTAMP') return (v) => v;
      if (f === 'DATE') return (v) => microsOfDate(v as string);
      if (f === 'STRING') return fromText(parseTimestampMicros, from, to);
      if (f === 'INT' || f === 'LONG') return (v) => within(big(v) * 1_000_000n, v);
      if (f === 'DECIMAL') {
        // Spark's decimalToTimestamp: seconds × 10^6 truncated toward zero (BigDecimal.longValue), not rounded
        const sc = from.scale!;
        return (v) => within(sc <= 6 ? unscaledOf(v as string) * 10n ** BigInt(6 - sc) : unscaledOf(v as string) / 10n ** BigInt(sc - 6), v);
      }
      if (f === 'DOUBLE') {
        return (v) => {
          const d = v as number;
          // Spark's doubleToTimestampAnsi: NaN and ±Infinity are malformed input (CAST_INVALID_INPUT), not an overflow
          if (!Number.isFinite(d)) throw invalid(v, from, to);
          return within(BigInt(Math.trunc(d * 1_000_000)), v);
        };
      }
      break;
    }
    case 'ARRAY': {
      const el = castFunction(from.element!, to.element!, false);
      return (v) => (v as unknown[]).map((x) => (x == null ? null : el(x)));
    }
    case 'MAP': {
      const val = castFunction(from.value!, to.value!, false);
      const fk = keyTypeOf(from);
      const tk = keyTypeOf(to);
      // a key of another type: its value cast, then held as the new type's text (map-keys.ts)
      const key = sameType(fk, tk)
        ? (k: string) => k
        : (
            (kv, cast, kt) => (k: string) =>
              kt(cast(kv(k)))
          )(keyValue(fk), castFunction(fk, tk, false), keyText(tk));
      return (v) => {
        const out: Record<string, unknown> = {};
        for (const [k, x] of mapEntries(v as object)) setEntry(out, key(k), x == null ? null : val(x));
        return out;
      };
    }
    case 'STRUCT': {
      const fs = to.fields!.map((tf, i) => ({ fromName: from.fields![i].name, name: tf.name, fn: castFunction(from.fields![i], tf, false) }));
      return (v) => {
        const out: Record<string, unknown> = {};
        for (const x of fs) {
          const fv = (v as Record<string, unknown>)[x.fromName];
          out[x.name] = fv == null ? null : x.fn(fv);
        }
        return out;
      };
    }
  }
  throw new Error(`internal: no cast from ${typeName(from)} to ${typeName(to)}`);
}

/** Spark's text of a value cast to STRING. */
function toStringFn(t: SqlType): (v: unknown) => string {
  switch (t.type) {
    case 'STRING':
    case 'DATE':
    case 'DECIMAL':
      return (v) => v as string;
    case 'INT':
    case 'LONG':
      return (v) => String(v);
    case 'BOOLEAN':
      return (v) => (v ? 'true' : 'false');
    case 'DOUBLE':
      return (v) => javaDoubleText(v as number, t.binary32);
    case 'TIMESTAMP':
      return (v) => formatTimestampText(v as Micros);
    case 'INTERVAL':
      return (v) => intervalText(v as number, t);
    case 'ARRAY': {
      const el = toStringFn(t.element!);
      return (v) => `[${(v as unknown[]).map((x) => (x == null ? 'null' : el(x))).join(', ')}]`;
    }
    case 'MAP': {
      const val = toStringFn(t.value!);
      const kt = keyTypeOf(t);
      const key =
        kt.type === 'STRING'
          ? (k: string) => k
          : (
              (kv, ks) => (k: string) =>
                ks(kv(k))
            )(keyValue(kt), toStringFn(kt));
      return (v) =>
        `{${mapEntries(v as object)
          .map(([k, x]) => `${key(k)} -> ${x == null ? 'null' : val(x)}`)
          .join(', ')}}`;
    }
    case 'STRUCT': {
      const fs = t.fields!.map((f) => ({ name: f.name, fn: toStringFn(f) }));
      return (v) =>
        `{${fs
          .map((f) => {
            const x = (v as Record<string, unknown>)[f.name];
            return x == null ? 'null' : f.fn(x);
          })
          .join(', ')}}`;
    }
    default:
      return (v) => String(v);
  }
}
