/**
 * The arithmetic operators' typing and evaluation (Spark 4's ANSI rules): both operands as one
 * numeric type (strings promoted, an integral literal beside a DECIMAL taking just its digits),
 * `+`/`-` with dates, timestamps and intervals, `*`, `/` (always DOUBLE or DECIMAL), `%` and `div`,
 * with Spark's overflow and division-by-zero errors. Called by the analyzer (analyze.ts binary).
 */
import { SparkRowError } from './errors';
import { exactDayTime } from './interval-makers';
import { epochDayOf } from '../dates';
import { type Analyzer, implicitCast } from './analyze';
import { addMonths, bigMicros, dateOfMicros, formatTimestampText, inRange, type Micros, microsValue } from './time';
import { dateOutOfRange, shiftedDate } from './date-range';
import { widerInterval } from './interval-text';
import { intervalByNumber } from './interval-scale';
import { strictNode, type Typed } from './typed';
import {
  asDecimal,
  DATE,
  DOUBLE,
  decimal,
  decimalResult,
  isIntegral,
  isNumeric,
  LONG,
  STRING,
  type SqlType,
  sameType,
  stringPromotion,
  TIMESTAMP,
  typeName,
  widerNumeric,
} from './types';
import { big, decimalOp, divideByZero, integralOp, isZero, LONG_MAX, LONG_MIN, longValue, overflow } from './values';

/** Both operands as one numeric type (strings promoted as ANSI does: BIGINT beside an integral, else DOUBLE). */
export function numericOperands(az: Analyzer, l: Typed, r: Typed, sql: string, pos: number): { l: Typed; r: Typed; type: SqlType } {
  let lt = l.type;
  let rt = r.type;
  if (lt.type === 'STRING' && rt.type === 'STRING') lt = rt = DOUBLE;
  else if (lt.type === 'STRING') lt = isNumeric(rt) ? stringPromotion(rt)! : DOUBLE;
  else if (rt.type === 'STRING') rt = isNumeric(lt) ? stringPromotion(lt)! : DOUBLE;
  if (lt.type === 'NULL' && rt.type === 'NULL') lt = rt = DOUBLE;
  else if (lt.type === 'NULL') lt = rt;
  else if (rt.type === 'NULL') rt = lt;
  if (!isNumeric(lt) || !isNumeric(rt)) {
    // Spark's BinaryOperator check: operands of one type that is not a number (TRUE + TRUE, and
    // TIMESTAMP + '1' once the STRING is promoted to TIMESTAMP) are BINARY_OP_WRONG_TYPE
    const promoted = (t: SqlType, other: SqlType) => (t.type === 'STRING' && other.type !== 'STRING' ? (stringPromotion(other) ?? t) : t);
    const one = promoted(l.type, r.type);
    if (sameType(one, promoted(r.type, l.type))) {
      throw az.mismatch('BINARY_OP_WRONG_TYPE', sql, `the binary operator requires a number or an interval, not "${typeName(one)}"`, pos);
    }
    throw az.mismatch(
      'BINARY_OP_DIFF_TYPES',
      sql,
      `the left and right operands of the binary operator have incompatible types ("${typeName(l.type)}" and "${typeName(r.type)}"); cast one of them`,
      pos,
    );
  }
  const t = widerNumeric(lt, rt);
  if (t.type === 'DECIMAL') {
    const ld = lt.type === 'DECIMAL' ? lt : rt.type === 'DECIMAL' ? (literalDecimal(l) ?? asDecimal(lt)) : asDecimal(lt);
    const rd = rt.type === 'DECIMAL' ? rt : lt.type === 'DECIMAL' ? (literalDecimal(r) ?? asDecimal(rt)) : asDecimal(rt);
    return { l: implicitCast(l, ld), r: implicitCast(r, rd), type: widerNumeric(ld, rd) };
  }
  return { l: implicitCast(l, t), r: implicitCast(r, t), type: t };
}

export function addSub(az: Analyzer, op: '+' | '-', l: Typed, r: Typed, sql: string, pos: number): Typed {
  const lt = l.type.type;
  const rt = r.type.type;
  const fn = op === '+' ? 'try_add' : 'try_subtract';
  // date and time arithmetic
  if ((lt === 'TIMESTAMP' || lt === 'DATE' || lt === 'STRING') && rt === 'INTERVAL') {
    const months = r.type.yearMonth === true;
    const sign = op === '+' ? 1 : -1;
    // Spark resolves these into TimeAdd, TimestampAddYMInterval, DateAddYMInterval (a + b) or DatetimeSub
    // (a - b): their SQL text, and so the name, has no parentheses
    const opSql = `${l.sql} ${op} ${r.sql}`;
    if (lt === 'DATE' && months) {
      return strictNode(DATE, opSql, [l, r], (d, m) => {
        const out = addMonths(d as string, sign * (m as number));
        if (out === null) throw dateOutOfRange(opSql);
        return out;
      });
    }
    if (lt === 'DATE' && r.type.days) {
      // Spark: DATE ± INTERVAL DAY is date_add(d, ±days), a DATE
      return strictNode(DATE, sql, [l, r], (d, iv) => shiftedDate(d as string, (sign * (iv as number)) / 86_400_000_000, sql));
    }
    const ts = implicitCast(l, TIMESTAMP);
    // Spark: STRING ± a day-time INTERVAL is the TIMESTAMP's sum cast back to STRING
    const text = lt === 'STRING' && !months;
    return strictNode(text ? STRING : TIMESTAMP, opSql, [ts, r], (t, iv) => {
      if (months) {
        const micros = bigMicros(t as Micros);
        const dayMicros = ((micros % 86_400_000_000n) + 86_400_000_000n) % 86_400_000_000n;
        const date = addMonths(dateOfMicros(t as Micros), sign * (iv as number));
        if (date === null) throw overflow(`timestamp overflow in ${sql}: the date is outside years 1 to 9999;`, fn);
        return microsValue(BigInt(epochDayOf(date)) * 86_400_000_000n + dayMicros);
      }
      const us = bigMicros(t as Micros) + BigInt(sign * (iv as number));
      if (!inRange(us)) throw overflow(`timestamp overflow in ${opSql}: the result is outside years 1 to 9999;`, fn);
      const sum = microsValue(us);
      return text ? formatTimestampText(sum) : sum;
    });
  }
  if (lt === 'INTERVAL' && op === '+' && (rt === 'TIMESTAMP' || rt === 'DATE')) return addSub(az, '+', r, l, sql, pos);
  // Spark: DATE ± n is date_add / date_sub, whose days are an INT, SMALLINT or TINYINT (DATE - STRING is a difference, below)
  const plusDays = lt === 'DATE' && (op === '+' || (rt !== 'DATE' && rt !== 'TIMESTAMP' && rt !== 'STRING'));
  if (plusDays || (op === '+' && rt === 'DATE')) {
    const [d, n] = plusDays ? [l, r] : [r, l];
    if (n.type.type !== 'INT' && n.type.type !== 'NULL') {
      throw az.mismatch(
        'UNEXPECTED_INPUT_TYPE',
        sql,
        `${op === '+' ? 'date_add' : 'date_sub'}(${d.sql}, ${n.sql}) requires its days as ("INT" or "SMALLINT" or "TINYINT"), however ${n.sql} has the type "${typeName(n.type)}"; cast it to INT`,
        pos,
      );
    }
    const sign = op === '+' ? 1 : -1;
    // Spark resolves DATE ± n into DateAdd / DateSub: named date_add(d, n) / date_sub(d, n)
    const dateSql = `${op === '+' ? 'date_add' : 'date_sub'}(${d.sql}, ${n.sql})`;
    return strictNode(DATE, dateSql, [d, n], (x, k) => shiftedDate(x as string, sign * (k as number), dateSql));
  }
  if (lt === 'INTERVAL' && rt === 'INTERVAL' && l.type.yearMonth === r.type.yearMonth) {
    // of the fields of both: INTERVAL DAY ± INTERVAL DAY stays INTERVAL DAY, DAY ± MINUTE is DAY TO MINUTE
    const ym = l.type.yearMonth === true;
    return strictNode(widerInterval(l.type, r.type), sql, [l, r], (x, y) => {
      const v = op === '+' ? (x as number) + (y as number) : (x as number) - (y as number);
      // (months add within an int's range in Spark: past it, its integer overflow; microseconds past 2^53, not exact here)
      if (ym ? v > 2147483647 || v < -2147483648 : !Number.isSafeInteger(v)) {
        if (ym) throw new SparkRowError('ARITHMETIC_OVERFLOW', `integer overflow in ${sql}: make the intervals smaller`);
        return exactDayTime(BigInt(x as number) + (op === '+' ? BigInt(y as number) : -BigInt(y as number)), sql);
      }
      return v;
    });
  }
  const datetime = (t: string) => t === 'DATE' || t === 'TIMESTAMP';
  if (op === '-' && (datetime(lt) || lt === 'STRING') && (datetime(rt) || rt === 'STRING') && (datetime(lt) || datetime(rt))) {
    // Spark: DATE - DATE is an INTERVAL DAY (SubtractDates); with a TIMESTAMP, an INTERVAL DAY TO
    // SECOND of the microseconds between them (SubtractTimestamps); a STRING on either side takes
    // the other's type (AnsiTypeCoercion's PromoteStrings: TIMESTAMP - '2026-10-01' is a SubtractTimestamps)
    if ((rt === 'DATE' && lt !== 'TIMESTAMP') || (lt === 'DATE' && rt === 'STRING')) {
      const a = implicitCast(l, DATE);
      const b = implicitCast(r, DATE);
      return strictNode(
        { type: 'INTERVAL', days: true, units: ['DAY', 'DAY'] },
        sql,
        [a, b],
        (x, y) => (epochDayOf(x as string) - epochDayOf(y as string)) * 86_400_000_000,
      );
    }
    const a = implicitCast(l, TIMESTAMP);
    const b = implicitCast(r, TIMESTAMP);
    return strictNode({ type: 'INTERVAL' }, sql, [a, b], (x, y) => exactDayTime(bigMicros(x as Micros) - bigMicros(y as Micros), sql));
  }
  const n = numericOperands(az, l, r, sql, pos);
  const t = n.type;
  if (t.type === 'DECIMAL') {
    const rtp = decimalResult(op, n.l.type, n.r.type);
    return strictNode(rtp, sql, [n.l, n.r], decimalOp(op, n.l.type, n.r.type, rtp, sql, fn));
  }
  if (isIntegral(t)) return strictNode(t, sql, [n.l, n.r], integralOp(op, t, sql, fn));
  const f32 = t.binary32 === true;
  const f =
    op === '+'
      ? f32
        ? (x: unknown, y: unknown) => Math.fround((x as number) + (y as number))
        : (x: unknown, y: unknown) => (x as number) + (y as number)
      : f32
        ? (x: unknown, y: unknown) => Math.fround((x as number) - (y as number))
        : (x: unknown, y: unknown) => (x as number) - (y as number);
  return strictNode(t, sql, [n.l, n.r], f);
}

export function mulDiv(az: Analyzer, op: '*' | '/' | '%' | 'DIV', l: Typed, r: Typed, sql: string, pos: number): Typed {
  const byNumber = intervalByNumber(op, l, r);
  if (byNumber !== null) return byNumber;
  const n = numericOperands(az, l, r, sql, pos);
  const t = n.type;
  if (op === '/') {
    // Spark's Divide takes DOUBLE or DECIMAL: integral operands are divided as DOUBLE (10 / 4 = 2.5)
    if (t.type === 'DECIMAL') {
      const rtp = decimalResult('/', n.l.type, n.r.type);
      return strictNode(rtp, sql, [n.l, n.r], decimalOp('/', n.l.type, n.r.type, rtp, sql, 'try_divide'));
    }
    // FLOAT too: Spark's DivisionTypeCoercion casts every non-DECIMAL operand to DOUBLE
    const a = implicitCast(n.l, DOUBLE);
    const b = implicitCast(n.r, DOUBLE);
    return strictNode(DOUBLE, sql, [a, b], (x, y) => {
      if (y === 0) throw divideByZero(sql);
      return (x as number) / (y as number);
    });
  }
  if (op === 'DIV') {
    if (t.type === 'DOUBLE')
      throw az.mismatch('BINARY_OP_WRONG_TYPE', sql, `div requires integral or DECIMAL operands, not "${typeName(t)}"; use / or cast to BIGINT`, pos);
    const sl = n.l.type.scale ?? 0;
    const sr = n.r.type.scale ?? 0;
    return strictNode(LONG, sql, [n.l, n.r], (x, y) => {
      if (isZero(y)) throw divideByZero(sql);
      // exact: both at the larger scale, truncated toward zero as Spark's IntegralDivide
      const s = Math.max(sl, sr);
      const a = t.type === 'DECIMAL' ? scaled(x as string, sl, s) : big(x);
      const b = t.type === 'DECIMAL' ? scaled(y as string, sr, s) : big(y);
      const q = a / b;
      if (q < LONG_MIN || q > LONG_MAX) throw overflow(`long overflow in ${sql};`, 'try_divide');
      return longValue(q);
    });
  }
  if (t.type === 'DECIMAL') {
    const rtp = decimalResult(op, n.l.type, n.r.type);
    return strictNode(rtp, sql, [n.l, n.r], decimalOp(op, n.l.type, n.r.type, rtp, sql, 'try_multiply'));
  }
  if (op === '*') {
    if (isIntegral(t)) return strictNode(t, sql, [n.l, n.r], integralOp('*', t, sql, 'try_multiply'));
    const f32 = t.binary32 === true;
    return strictNode(t, sql, [n.l, n.r], (x, y) => (f32 ? Math.fround((x as number) * (y as number)) : (x as number) * (y as number)));
  }
  // % : the remainder takes the dividend's sign (Java's %), division by zero is DIVIDE_BY_ZERO under ANSI
  return strictNode(t, sql, [n.l, n.r], (x, y) => {
    if (isZero(y)) throw divideByZero(sql, 'try_mod');
    if (typeof x === 'bigint' || typeof y === 'bigint') return longValue(big(x) % big(y));
    const m = (x as number) % (y as number);
    // Java's %: a DOUBLE remainder keeps the dividend's sign (-4.0 % 2 is -0.0), an integral one has no -0
    return t.type === 'DOUBLE' ? (t.binary32 ? Math.fround(m) : m) : m === 0 ? 0 : m;
  });
}

/**
 * An integral literal beside a DECIMAL in a binary operator: the DECIMAL of exactly its digits
 * (Spark's DecimalPrecision with literalPickMinimumPrecision, its default; DecimalType.forLiteral:
 * a TINYINT literal keeps DECIMAL(3,0)). Null when `t` is not such a literal.
 */
function literalDecimal(t: Typed): SqlType | null {
  if (t.constant === undefined || !isIntegral(t.type) || t.type.bits === 8) return null;
  const v = t.constant.value;
  if (typeof v !== 'number' && typeof v !== 'bigint') return null;
  const digits = (typeof v === 'bigint' ? (v < 0n ? -v : v) : Math.abs(v)).toString().length;
  return decimal(digits, 0);
}

function scaled(v: string, own: number, to: number): bigint {
  const dot = v.indexOf('.');
  const u = BigInt(dot < 0 ? v : v.slice(0, dot) + v.slice(dot + 1));
  return u * 10n ** BigInt(to - own);
}
