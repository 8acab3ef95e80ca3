/**
 * The literals of Spark SQL expressions as syntax-tree nodes: numbers with Spark's suffixes and
 * ranges (an INT, BIGINT, DECIMAL or DOUBLE by its text), DATE and TIMESTAMP typed literals, and
 * intervals (their units, the text form `'1 hour 30 minutes'`, and the ANSI interval type).
 */
import { dateOfText } from './cast';
import { ExpressionError } from './errors';
import type { Token } from './lexer';
import type { Ast } from './parser';
import { formatTimestampText, parseTimestampMicros } from './time';
import { DATE, DOUBLE, INT, LONG, TIMESTAMP, decimal } from './types';

/** Interval units and their size: months for YEAR/MONTH, microseconds for the rest. */
const UNITS: Record<string, { months?: number; micros?: number }> = {
  YEAR: { months: 12 },
  MONTH: { months: 1 },
  WEEK: { micros: 7 * 86_400_000_000 },
  DAY: { micros: 86_400_000_000 },
  HOUR: { micros: 3_600_000_000 },
  MINUTE: { micros: 60_000_000 },
  SECOND: { micros: 1_000_000 },
  MILLISECOND: { micros: 1000 },
  MICROSECOND: { micros: 1 },
};

export function unitOf(word: string): { months?: number; micros?: number } | undefined {
  const u = word.toUpperCase();
  return UNITS[u] ?? (u.endsWith('S') ? UNITS[u.slice(0, -1)] : undefined);
}

/**
 * An interval's text as `INTERVAL '...'` and window durations write it: one or more `<number> <unit>`
 * ("10 minutes", "1 hour 30 minutes", "1.5 seconds"); returns months and microseconds, or null.
 */
export function parseIntervalText(text: string): { months: number; micros: number; days: boolean } | null {
  const words = text.trim().split(/\s+/);
  if (words.length < 2 || words.length % 2 !== 0) return null;
  let months = 0;
  let micros = 0;
  let days = true;
  for (let i = 0; i < words.length; i += 2) {
    const u = unitOf(words[i + 1]);
    if (!/^[+-]?\d+(\.\d+)?$/.test(words[i]) || u === undefined) return null;
    if (!/^(DAY|WEEK)S?$/i.test(words[i + 1]) || !/^[+-]?\d+$/.test(words[i])) days = false;
    const n = Number(words[i]);
    if (u.months !== undefined) {
      if (!Number.isInteger(n)) return null;
      months += n * u.months;
    } else micros += Math.round(n * u.micros!);
  }
  return { months, micros, days };
}

/** An interval's months and microseconds as a literal: YEAR TO MONTH, DAY (DAY and WEEK units alone) or DAY TO SECOND; both is refused, as Spark 4. */
export function intervalLiteral({ months, micros, days }: { months: number; micros: number; days: boolean }, text: string, pos: number, sql: string): Ast {
  if (months !== 0 && micros !== 0) {
    throw new ExpressionError(
      'INVALID_INTERVAL_FORMAT',
      'an interval mixes months or years with days or smaller units; Spark 4 has no such ANSI interval: write two intervals and add them one after the other',
      text,
      pos,
    );
  }
  const yearMonth = months !== 0;
  return {
    k: 'lit',
    pos,
    value: yearMonth ? months : micros,
    type: yearMonth ? { type: 'INTERVAL', yearMonth: true } : days ? { type: 'INTERVAL', days: true } : { type: 'INTERVAL' },
    sql,
  };
}

const INT_MIN = -2147483648;
const INT_MAX = 2147483647;
const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;

/** A LONG value: a number when it is a safe integer, else a bigint. */
function longValue(v: bigint): number | bigint {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

export function numberLiteral(t: Token, text: string, negative = false): Ast {
  const s = t.text;
  const sign = negative ? '-' : '';
  const sql = `${sign}${s}${t.suffix}`;
  const bad = (what: string) => new ExpressionError('INVALID_NUMERIC_LITERAL_RANGE', `${sql} ${what}`, text, t.pos);
  const isWhole = /^[0-9]+$/.test(s);
  const signed = (v: bigint) => (negative ? -v : v);
  switch (t.suffix) {
    case 'L':
    case 'S':
    case 'Y': {
      if (!isWhole)
        throw new ExpressionError('PARSE_SYNTAX_ERROR', `Syntax error at or near '${s}${t.suffix}': expected a whole number before ${t.suffix}`, text, t.pos);
      const v = signed(BigInt(s));
      if (t.suffix === 'L') {
        if (v > LONG_MAX || v < LONG_MIN)
          throw bad('is outside the range of BIGINT [-9223372036854775808, 9223372036854775807]: write it as a decimal (without L)');
        return { k: 'lit', pos: t.pos, value: longValue(v), type: LONG, sql };
      }
      const bits = t.suffix === 'S' ? 16 : 8;
      const m = 2n ** BigInt(bits - 1);
      if (v >= m || v < -m) throw bad(`is outside the range of ${bits === 16 ? 'SMALLINT [-32768, 32767]' : 'TINYINT [-128, 127]'}: use a wider type`);
      return { k: 'lit', pos: t.pos, value: Number(v) + 0, type: { type: 'INT', bits }, sql };
    }
    case 'D':
    case 'F': {
      const d = Number(`${sign}${s}`);
      const value = t.suffix === 'F' ? Math.fround(d) : d;
      // Spark checks the literal against the type's range (1e400D is refused, not Infinity)
      if (!Number.isFinite(value)) throw bad(`is outside the range of ${t.suffix === 'F' ? 'FLOAT' : 'DOUBLE'}`);
      return { k: 'lit', pos: t.pos, value, type: t.suffix === 'F' ? { type: 'DOUBLE', binary32: true } : DOUBLE, sql };
    }
  }
  if (t.suffix === '' && /[eE]/.test(s)) {
    const value = Number(`${sign}${s}`);
    if (!Number.isFinite(value)) throw bad('is outside the range of DOUBLE');
    return { k: 'lit', pos: t.pos, value, type: DOUBLE, sql };
  }
  if (t.suffix === '' && isWhole) {
    const v = signed(BigInt(s));
    if (v <= BigInt(INT_MAX) && v >= BigInt(INT_MIN)) return { k: 'lit', pos: t.pos, value: Number(v) + 0, type: INT, sql };
    if (v <= LONG_MAX && v >= LONG_MIN) return { k: 'lit', pos: t.pos, value: longValue(v), type: LONG, sql };
  }
  // A number with a point (or an integer beyond BIGINT) is a DECIMAL literal, as in Spark: 1.5 is DECIMAL(2,1).
  const m = /^([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$/.exec(s)!;
  let digits = `${m[1]}${m[2] ?? ''}`.replace(/^0+(?=[0-9])/, '');
  let scale = (m[2] ?? '').length - (m[3] === undefined ? 0 : Number(m[3]));
  if (scale < 0) {
    digits += '0'.repeat(-scale);
    scale = 0;
  }
  const unscaled = BigInt(digits || '0');
  const precision = Math.max(unscaled === 0n ? 1 : unscaled.toString().length, scale);
  if (precision > 38)
    throw new ExpressionError(
      'DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION',
      `Decimal precision ${precision} exceeds max precision 38: ${sql} has more digits than a DECIMAL holds; write it as a DOUBLE (1e40 or a D suffix)`,
      text,
      t.pos,
    );
  const value = formatUnscaled(negative && unscaled !== 0n ? -unscaled : unscaled, scale);
  return { k: 'lit', pos: t.pos, value, type: decimal(precision, scale), sql };
}

function formatUnscaled(u: bigint, scale: number): string {
  const neg = u < 0n;
  let d = (neg ? -u : u).toString();
  if (scale > 0) {
    if (d.length <= scale) d = '0'.repeat(scale - d.length + 1) + d;
    d = `${d.slice(0, d.length - scale)}.${d.slice(d.length - scale)}`;
  }
  return neg ? `-${d}` : d;
}

export function typedLiteral(word: 'DATE' | 'TIMESTAMP', s: Token, text: string): Ast {
  if (word === 'DATE') {
    const d = dateOfText(s.text);
    if (d === null)
      throw new ExpressionError(
        'INVALID_TYPED_LITERAL',
        `The value of the typed literal DATE '${s.text}' is not a date of years 1 to 9999: write it as 'YYYY-MM-DD'`,
        text,
        s.pos,
      );
    return { k: 'lit', pos: s.pos, value: d, type: DATE, sql: `DATE '${d}'` };
  }
  const us = parseTimestampMicros(s.text);
  if (us === null) {
    throw new ExpressionError(
      'INVALID_TYPED_LITERAL',
      `The value of the typed literal TIMESTAMP '${s.text}' is not a timestamp: write it as 'YYYY-MM-DD HH:MM:SS[.ffffff]' (UTC) or ISO 8601 with an offset`,
      text,
      s.pos,
    );
  }
  return { k: 'lit', pos: s.pos, value: us, type: TIMESTAMP, sql: `TIMESTAMP '${formatTimestampText(us)}'` };
}
