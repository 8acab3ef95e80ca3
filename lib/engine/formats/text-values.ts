/**
 * A field's text as a value of its column's type, as Spark's CSV reader converts a token
 * (UnivocityParser.makeConverter): integers as Java's parseInt/parseLong (an optional sign,
 * digits), DOUBLE first by the nanValue/negativeInf/positiveInf texts (NaN, -Inf, Inf unless set),
 * then as Double.parseDouble (exponents, surrounding blanks, a d/f suffix, NaN, Infinity),
 * BOOLEAN as true/false in any case, DECIMAL exact
 * (BigDecimal of the text, commas dropped, HALF_UP to the scale, too many digits refused), DATE
 * and TIMESTAMP by the dateFormat/timestampFormat patterns, else Spark's default forms. A text
 * that does not fit throws BadText with the reason.
 */
import { dateOfText } from './date-text';
import type { DatetimePattern } from '../datetime-patterns';
import { ddlOf } from '../ddl';
import { decimalOfText, float32OfText, javaDigits } from '../decimal';
import { type Column, canonicalLong } from '../schema';
import { inputTimestamp } from '../timestamp-input';

export class BadText extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

export interface TextPatterns {
  readonly date: DatetimePattern | null;
  readonly timestamp: DatetimePattern | null;
  /** the texts of NaN and the infinities (CSV's nanValue, positiveInf, negativeInf); unset: NaN, Inf, -Inf */
  readonly floats?: FloatNames;
}

interface FloatNames {
  readonly nan: string;
  readonly positiveInf: string;
  readonly negativeInf: string;
}

const FLOAT_NAMES: FloatNames = { nan: 'NaN', positiveInf: 'Inf', negativeInf: '-Inf' };

const INTEGER = /^[+-]?\d+$/;
const DOUBLE = /^\s*[+-]?(?:NaN|Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?)\s*$/;
const RANGES: Record<number, readonly [bigint, bigint]> = {
  8: [-128n, 127n],
  16: [-32768n, 32767n],
  32: [-2147483648n, 2147483647n],
  64: [-(2n ** 63n), 2n ** 63n - 1n],
};

function bad(col: Column, text: string, rule: string): never {
  throw new BadText(`column ${col.name} (${ddlOf(col)}): ${JSON.stringify(text)} ${rule}`);
}

/** The value of `text` in column `col` (a scalar type: the callers refuse nested ones for text formats). */
export function valueOfText(col: Column, text: string, patterns: TextPatterns): unknown {
  switch (col.type) {
    case 'STRING':
      return text;
    case 'INT':
    case 'LONG': {
      const bits = col.type === 'LONG' ? 64 : (col.bits ?? 32);
      if (!INTEGER.test(text)) bad(col, text, 'is not an integer (an optional sign and digits): fix the value at the producer, or declare the column STRING');
      const n = BigInt(text);
      const [lo, hi] = RANGES[bits];
      if (n < lo || n > hi) bad(col, text, `is out of the ${ddlOf(col)} range ${lo}..${hi}: declare the column wider (BIGINT, DECIMAL(38,0))`);
      return col.type === 'LONG' ? canonicalLong(n) : Number(n);
    }
    case 'DOUBLE': {
      // the names first, in Spark's order (nanValue, negativeInf, positiveInf), then Java's parse
      const names = patterns.floats ?? FLOAT_NAMES;
      if (text === names.nan) return Number.NaN;
      if (text === names.negativeInf) return Number.NEGATIVE_INFINITY;
      if (text === names.positiveInf) return Number.POSITIVE_INFINITY;
      if (!DOUBLE.test(text)) bad(col, text, 'is not a number: fix the value at the producer, or declare the column STRING');
      const number = text.trim().replace(/[fFdD]$/, '');
      // a FLOAT is Float.parseFloat's nearest float, not fround of the nearest double (float32OfText)
      return col.binary32 ? float32OfText(number) : Number(number);
    }
    case 'BOOLEAN': {
      const t = text.toLowerCase();
      if (t !== 'true' && t !== 'false') bad(col, text, 'is not true or false: fix the value at the producer, or declare the column STRING');
      return t === 'true';
    }
    case 'DECIMAL': {
      // (Java's BigDecimal of the text without its commas: digits of any script too, javaDigits)
      const v = decimalOfText(javaDigits(text.replace(/,/g, '')), col.precision ?? 10, col.scale ?? 0);
      if (v === null) {
        bad(
          col,
          text,
          `is not a number of at most ${(col.precision ?? 10) - (col.scale ?? 0)} integer digits: fix the value at the producer, or declare a wider DECIMAL`,
        );
      }
      return v;
    }
    case 'DATE': {
      const v = patterns.date ? patterns.date.parseDate(text) : dateOfText(text);
      if (v === null) {
        bad(
          col,
          text,
          `is not a date${patterns.date ? ` of dateFormat ${JSON.stringify(patterns.date.pattern)}` : ' (YYYY-MM-DD)'}: fix the value at the producer, or set the dateFormat option to its pattern`,
        );
      }
      return v;
    }
    case 'TIMESTAMP': {
      const v = patterns.timestamp ? patterns.timestamp.parseTimestamp(text) : inputTimestamp(text);
      if (v === null) {
        bad(
          col,
          text,
          `is not a timestamp${patterns.timestamp ? ` of timestampFormat ${JSON.stringify(patterns.timestamp.pattern)}` : " (Spark's forms: 2026-10-01 12:00:00, ISO 8601 with T and a zone)"}: fix the value at the producer, or set the timestampFormat option to its pattern`,
        );
      }
      return v;
    }
    default:
      return bad(col, text, 'cannot be read from text: nested types are read from JSON or Parquet');
  }
}
