/**
 * Why a parsed JSON value does not fit its column's type (describeBad: the reason a bad record
 * carries, naming the column, the value and the rule), with the readings of a parsed value it
 * shares with the typing in json-record.ts: a number as lossless-json gives it (isNumberLiteral),
 * a value's text (shown, nonFiniteAsString), a DECIMAL's string (decimalString), an INT's range.
 */
import { ddlOf } from './ddl';
import { javaDigits } from './decimal';
import type { DataType } from './schema';

/** A JSON integer literal (Jackson's VALUE_NUMBER_INT): no fraction, no exponent. */
export const INTEGER_LITERAL = /^-?[0-9]+$/;

/** The range of an INT column of `bits` (8, 16, or 32 when absent), as [min, max]. */
export function intRange(bits: 8 | 16 | undefined): readonly [number, number] {
  return bits === 8 ? INT8 : bits === 16 ? INT16 : INT32;
}
const INT8 = [-128, 127] as const;
const INT16 = [-32768, 32767] as const;
const INT32 = [-2147483648, 2147483647] as const;

/** A parsed value's kind, as a message names it (a bigint is a number). */
export function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'bigint' ? 'number' : typeof v;
}

/** A number as lossless-json's parse gives it: the literal's text, for the column's type to read. */
interface NumberLiteral {
  readonly isLosslessNumber: true;
  readonly value: string;
}

export function isNumberLiteral(v: unknown): v is NumberLiteral {
  return typeof v === 'object' && v !== null && (v as NumberLiteral).isLosslessNumber === true;
}

/** A value for a message: numbers as written, others as JSON, cut short when long. */
export function shown(v: unknown): string {
  if (isNumberLiteral(v)) return v.value;
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  let text: string;
  try {
    text = JSON.stringify(v, nonFiniteAsString) ?? String(v);
  } catch {
    text = String(v);
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** JSON.stringify's replacer for numberText's rule (json-record.ts: NaN and the infinities quoted) inside arrays and objects. */
export function nonFiniteAsString(_key: string, v: unknown): unknown {
  if (isNumberLiteral(v)) return Number(v.value); // the double JSON.parse would have read (numberText mode)
  if (typeof v === 'bigint') return Number(v); // a nested integer JSON.parse would have read as this double (parseBigIntegers)
  return typeof v === 'number' && !Number.isFinite(v) ? String(v) : v;
}

/**
 * Why a number does not fit DECIMAL(p,s), and the type that would hold it: a wider DECIMAL while
 * its digits before the point and the scale fit in 38, else a smaller scale, else DOUBLE or STRING.
 */
function decimalTooWide(t: DataType, n: number): string {
  const p = t.precision!;
  const s = t.scale!;
  // the digits before the point (a number past a double's range: more than any DECIMAL holds)
  const digits = Number.isFinite(n) ? Math.max(1, Math.floor(Math.log10(Math.abs(n))) + 1) : Number.POSITIVE_INFINITY;
  const why = `needs more than ${p - s} digits before the point`;
  if (digits + s <= 38) return `${why}; declare the column DECIMAL(${Math.min(38, Math.max(p + 10, digits + s))},${s}) or wider (at most 38 digits)`;
  if (digits <= 38) return `${why}; declare the column with a smaller scale, e.g. DECIMAL(38,${38 - digits}), or DOUBLE`;
  if (Number.isFinite(n)) return `${why}, more than the 38 a DECIMAL holds: declare the column DOUBLE or STRING`;
  return `${why}, more than a DECIMAL or a DOUBLE holds: declare the column STRING to keep its text`;
}

/** Why `v`, the value at `path`, does not fit type `t`: the column, its type, the value, the rule and what to declare or fix. */
export function describeBad(path: string, t: DataType, v: unknown): string {
  const kind = isNumberLiteral(v) ? 'number' : typeName(v);
  // (a number token past a double's range reaches here as an infinity: its text is not kept on that path)
  const head =
    typeof v === 'number' && !Number.isFinite(v) && !Number.isNaN(v)
      ? `column ${path} (${ddlOf(t)}) has a number ${v > 0 ? 'above' : 'below'} ${v > 0 ? '' : '-'}1.8e308 (a huge exponent): `
      : `column ${path} (${ddlOf(t)}) has ${kind} ${shown(v)}: `;
  const n = isNumberLiteral(v) ? Number(v.value) : v;
  if (isNumberLiteral(v) && !INTEGER_LITERAL.test(v.value) && (t.type === 'INT' || t.type === 'LONG' || t.type === 'TIMESTAMP')) {
    return t.type === 'TIMESTAMP'
      ? `${head}a number is epoch seconds only as a JSON integer (a fraction or an exponent makes it another token, which Spark's JSON reader refuses for a TIMESTAMP): write whole seconds, or a "YYYY-MM-DD HH:MM:SS[.ffffff]" string`
      : `${head}expected a JSON integer (a fraction or an exponent makes it another token, which Spark's JSON reader refuses for ${ddlOf(t)}, even 1.0 or 1e2): write the integer's digits at the producer, or declare the column DOUBLE or DECIMAL`;
  }
  switch (t.type) {
    case 'INT':
      return (
        head +
        (typeof n === 'number' && Number.isInteger(n)
          ? `out of the ${ddlOf(t)} range ${intRange(t.bits).join('..')}; declare the column ${t.bits === 8 ? 'SMALLINT, INT' : t.bits === 16 ? 'INT' : 'BIGINT'} or wider`
          : 'expected a JSON integer; fix the producer or declare the column DOUBLE/STRING')
      );
    case 'LONG':
      return (
        head +
        (typeof v === 'bigint' || (isNumberLiteral(v) && /^-?[0-9]+$/.test(v.value))
          ? 'out of the BIGINT range -9223372036854775808..9223372036854775807; declare the column DECIMAL(38,0) or STRING'
          : typeof n === 'number' && Number.isInteger(n)
            ? "beyond ±9007199254740991 (2^53 − 1) and not written as an integer literal (a fraction or an exponent makes it a double, which cannot hold it exactly); write the integer's digits"
            : 'expected a JSON integer; fix the producer or declare the column DOUBLE/STRING')
      );
    case 'DOUBLE':
      return `${head}expected a JSON number; fix the producer or declare the column STRING`;
    case 'BOOLEAN':
      return `${head}expected true or false`;
    case 'DECIMAL': {
      // (a string of a number: what its text needs)
      const written = typeof v === 'string' ? decimalString(v) : null;
      const wide = written !== null && /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(written) ? Number(written) : n;
      return typeof wide === 'number'
        ? head + decimalTooWide(t, wide)
        : `${head}expected a JSON number, or a string of one (Java's BigDecimal text: an optional sign, digits with an optional point and exponent, commas ignored); fix the producer or declare the column STRING`;
    }
    case 'DATE':
      return `${head}expected "YYYY-MM-DD", a day of years 0001-9999; fix the producer or declare the column STRING`;
    case 'ARRAY':
      return `${head}expected a JSON array; fix the producer or declare the column STRING`;
    case 'MAP':
    case 'STRUCT':
      return `${head}expected a JSON object; fix the producer or declare the column STRING`;
    default:
      return (
        head +
        (typeof n === 'number'
          ? 'epoch seconds outside 0001-01-01..9999-12-31 (milliseconds or microseconds?): send seconds, or a "YYYY-MM-DD HH:MM:SS[.ffffff]" string'
          : 'expected "YYYY-MM-DD HH:MM:SS[.ffffff]" (UTC, years 0001-9999, up to 6 fraction digits), ISO 8601 with Z or an offset up to ±18:00, or epoch seconds')
      );
  }
}

/**
 * The text Spark's JSON reader gives Java's BigDecimal for a DECIMAL written as a JSON string
 * (JacksonParser's VALUE_STRING case, ExprUtils.getDecimalParser for the default locale): its
 * commas dropped (`"1,234.50"`), digits of other scripts read as Java reads them; null for the
 * empty string, which Spark refuses for every type but STRING.
 */
export function decimalString(v: string): string | null {
  return v.length === 0 ? null : javaDigits(v.replace(/,/g, ''));
}
