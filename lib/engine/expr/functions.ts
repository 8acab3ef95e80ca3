/**
 * The function registry: every function an expression may call, by its lower-case name, with its
 * typing (Spark's input types and implicit casts, result type) and its evaluator. Conditional and
 * math functions and the try_ family are here; strings, collections and JSON, dates and hashes
 * have modules of their own.
 */
import { pow10, rescale, unscaledOf, unscaledOfText, formatDecimal, fitsPrecision } from '../decimal';
import { type CallCtx, type FunctionDef, implicitCast } from './analyze';
import { COLLECTION_FUNCTIONS } from './collections';
import { ARRAY_MAP_FUNCTIONS } from './array-map-functions';
import { TEXT_FUNCTIONS } from './text-functions';
import { FORMAT_FUNCTIONS } from './format-string';
import { NUMBER_FORMAT_FUNCTIONS } from './number-format';
import { DATETIME_FUNCTIONS } from './datetime';
import { DATETIME_CONVERSIONS } from './datetime-conversions';
import { SparkRowError } from './errors';
import { BIT, BOOLEAN_AGGS, COLLECT, PAIR, STATISTICAL } from '../plan/agg-kinds';
import { call, constantArg, def, double, int, numeric } from './fn-util';
import { HASH_FUNCTIONS } from './hashes';
import { FROM_CSV_FUNCTIONS } from './from-csv';
import { TO_CSV_FUNCTIONS } from './to-csv';
import { FROM_JSON_FUNCTIONS } from './from-json';
import { SCHEMA_OF_CSV_FUNCTIONS } from './schema-of-csv';
import { SCHEMA_OF_JSON_FUNCTIONS } from './schema-of-json';
import { GENERATOR_FUNCTIONS } from './generators';
import { INPUT_FILE_FUNCTIONS } from './input-file';
import { RAISE_FUNCTIONS } from './raise-functions';
import { INTERVAL_MAKERS } from './interval-makers';
import { JSON_FUNCTIONS } from './json-functions';
import { MORE_FUNCTIONS } from './more-functions';
import { MATH_FUNCTIONS } from './math-functions';
import { REGEXP_FUNCTIONS } from './regexp';
import { STRING_FUNCTIONS } from './strings';
import { strict, type Eval, type Typed, withJs } from './typed';
import { asDecimal, BOOLEAN, commonType, DOUBLE, decimal, isIntegral, isNumeric, LONG, MAX_PRECISION, type SqlType, typeName } from './types';
import { big, checkIntegral, comparator, longValue } from './values';

/** Functions Spark has that return another value on a replay; refused (FORMAT-3: only deterministic functions). */
export const NON_DETERMINISTIC = new Set([
  'rand',
  'randn',
  'random',
  'uuid',
  'shuffle',
  'current_timestamp',
  'current_date',
  'curdate',
  'now',
  'localtimestamp',
  'current_timezone',
  'monotonically_increasing_id',
  'spark_partition_id',
  'randstr',
  'uniform',
]);

/** Aggregate functions: not row expressions (an aggregation takes them). */
export const AGGREGATES: ReadonlySet<string> = new Set([
  'sum',
  'count',
  'avg',
  'mean',
  'try_sum',
  'try_avg',
  'min',
  'max',
  'first',
  'first_value',
  'last',
  'last_value',
  'approx_count_distinct',
  'count_distinct',
  'median',
  'mode',
  'percentile',
  'percentile_cont',
  'percentile_disc',
  'percentile_approx',
  'approx_percentile',
  'max_by',
  'min_by',
  'any_value',
  'array_agg',
  'product',
  'listagg',
  'string_agg',
  ...STATISTICAL,
  ...BOOLEAN_AGGS,
  ...COLLECT,
  ...PAIR,
  ...BIT,
]);

/** The common type of the arguments, each cast to it; a refusal (DATA_DIFF_TYPES) when there is none. */
function common(args: readonly Typed[], c: CallCtx, promoteStrings = true): { args: Typed[]; type: SqlType } {
  const t = commonType(
    args.map((a) => a.type),
    promoteStrings,
  );
  if (t === null) {
    throw c.az.mismatch(
      'DATA_DIFF_TYPES',
      c.sql,
      `the input to \`${c.name}\` should all be the same type, but it's [${args.map((a) => `"${typeName(a.type)}"`).join(', ')}]; cast them to one type`,
      c.pos,
    );
  }
  return { args: args.map((a) => implicitCast(a, t)), type: t };
}

function coalesce(args: readonly Typed[], c: CallCtx): Typed {
  const { args: as, type } = common(args, c);
  return call(
    c,
    type,
    as,
    withJs(
      (evs) => (row) => {
        for (const e of evs) {
          const v = e(row);
          if (v != null) return v;
        }
        return null;
      },
      (args, g) => {
        const v = g.tmp();
        return `(${args.map((a) => `(${v} = ${a}) != null ? ${v} : `).join('')}null)`;
      },
    ),
  );
}

function greatestLeast(args: readonly Typed[], c: CallCtx, sign: 1 | -1): Typed {
  // Spark widens greatest/least arguments without promoting a STRING (findWiderTypeWithoutStringPromotion):
  // greatest(1, '5') is DATA_DIFF_TYPES, as is greatest(DATE '2026-01-01', '2026-05-01')
  const { args: as, type } = common(args, c, false);
  if (type.type === 'MAP') throw c.az.mismatch('INVALID_ORDERING_TYPE', c.sql, `\`${c.name}\` does not support ordering on type "${typeName(type)}"`, c.pos);
  const cmp = comparator(type);
  return call(c, type, as, (evs) => (row) => {
    let best: unknown = null;
    for (const e of evs) {
      const v = e(row);
      if (v != null && (best === null || sign * cmp(v, best) > 0)) best = v;
    }
    return best;
  });
}

/**
 * A function that returns null where the wrapped operator raises an ANSI error (try_add, try_divide...).
 * Spark 3.4+ evaluates it as the operator in EvalMode.TRY when both arguments are numeric: only the
 * operator's own overflow or division by zero is null, an argument's error (try_add(1, CAST('x' AS
 * INT))) stays the row's error. Other arguments (a STRING, NULL, a date) are TryEval of the ANSI
 * operator: any error is null.
 */
function tryOf(op: string): FunctionDef {
  return def(2, 2, ([a, b], c) => {
    const inner = c.az.binary(op, a, b, c.pos);
    const own = isNumeric(a.type) && isNumeric(b.type);
    return { ...inner, sql: c.sql, name: c.sql, build: (evs) => swallow(inner.build(own ? evs.map(argumentErrors) : evs)) };
  });
}

/** An argument's error, kept apart so that swallow passes it on (the operator's EvalMode.TRY does not catch it). */
class ArgumentError {
  constructor(readonly error: unknown) {}
}

function argumentErrors(e: Eval): Eval {
  return (row) => {
    try {
      return e(row);
    } catch (x) {
      throw new ArgumentError(x);
    }
  };
}

function swallow(f: Eval): Eval {
  return (row) => {
    try {
      return f(row);
    } catch (e) {
      if (e instanceof ArgumentError) throw e.error;
      if (e instanceof SparkRowError) return null;
      throw e;
    }
  };
}

/**
 * round / bround: HALF_UP or HALF_EVEN to `d` decimals (negative: to tens, hundreds...), with Spark's
 * result types; floor / ceil with a scale (Spark's RoundFloor / RoundCeil: FLOOR or CEILING, the same types).
 */
function rounding(args: readonly Typed[], c: CallCtx, mode: 'HALF_UP' | 'HALF_EVEN' | 'FLOOR' | 'CEILING', scale?: number): Typed {
  const given = scale ?? (args[1] === undefined ? 0 : (constantArg(c, int(c, args[1], 1), 1, 'the scale, an INT literal') as number | null));
  if (given === null) {
    // Spark's RoundBase: a NULL scale makes every result NULL (typed as with scale 0), the value unread
    const typed = rounding([args[0]], c, mode, 0);
    return call(c, typed.type, typed.children, () => () => null);
  }
  const d = given;
  const x = numeric(c, args[0], 0);
  const t = x.type;
  const roundUnscaled = (u: bigint, drop: number): bigint => {
    if (drop <= 0) return u * pow10(-drop);
    const p = pow10(drop);
    const q = u / p;
    const r = u % p;
    if (mode === 'FLOOR' || mode === 'CEILING') return r === 0n ? q : mode === 'FLOOR' ? (u < 0n ? q - 1n : q) : u < 0n ? q : q + 1n;
    const twice = (r < 0n ? -r : r) * 2n;
    const away = twice > p || (twice === p && (mode === 'HALF_UP' || q % 2n !== 0n));
    return away ? (u < 0n ? q - 1n : q + 1n) : q;
  };
  if (t.type === 'DECIMAL') {
    const p = t.precision!;
    const s = t.scale!;
    const intDigits = p - s + 1;
    const rt =
      d < 0 ? decimal(Math.min(Math.max(intDigits, -d + 1), MAX_PRECISION), 0) : decimal(Math.min(intDigits + Math.min(s, d), MAX_PRECISION), Math.min(s, d));
    return call(
      c,
      rt,
      [x],
      strict((v) => {
        const u = unscaledOf(v as string);
        // (a scale past the value's is no rounding, and one below -40 rounds every DECIMAL to 0: bounded, so 10^d stays small)
        const dd = Math.max(Math.min(d, s), -(MAX_PRECISION + 2));
        const kept = roundUnscaled(u, s - dd); // at scale dd
        const at = dd < 0 ? kept * pow10(-dd) : rescale(kept, dd, rt.scale!);
        // Only a negative scale can need more digits than the type has (99...9 to tens): Spark sets
        // the rounded value into the result type, whose precision check fails for every mode
        if (!fitsPrecision(at, rt.precision!)) {
          const digits = (at < 0n ? -at : at).toString().length;
          throw new SparkRowError(
            'DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION',
            `Decimal precision ${digits} exceeds max precision ${rt.precision} in ${c.sql}: the rounded value ${formatDecimal(at, rt.scale!)} does not fit ${typeName(rt)}.`,
          );
        }
        return formatDecimal(at, rt.scale!);
      }),
    );
  }
  if (isIntegral(t)) {
    return call(
      c,
      t,
      [x],
      // (below -25 every BIGINT rounds to 0 alike)
      strict((v) => (d >= 0 ? v : checkIntegral(longValue(roundUnscaled(big(v), -Math.max(d, -25)) * pow10(-Math.max(d, -25))), t, c.sql, `try_${c.name}`))),
    );
  }
  // DOUBLE: through the double's shortest decimal text, as Spark's BigDecimal(double)
  return call(
    c,
    t,
    [x],
    strict((v) => {
      const n = v as number;
      if (!Number.isFinite(n)) return n;
      // a double has at most 324 decimals and 309 integral digits: a scale beyond ±400 rounds alike
      const dd = Math.min(Math.max(d, -400), 400);
      const scale = Math.max(dd, 0);
      const u = unscaledOfText(String(n), 400)!;
      const kept = roundUnscaled(u, 400 - dd);
      const r = Number(formatDecimal(dd < 0 ? kept * pow10(-dd) : kept, scale));
      return t.binary32 ? Math.fround(r) : r;
    }),
  );
}

/**
 * floor / ceil: DOUBLE to BIGINT, DECIMAL(p,s) to DECIMAL(p-s+1,0) (DECIMAL(p,0) stays), integral to BIGINT.
 * With a scale (an INT literal), Spark's RoundFloor / RoundCeil: a DECIMAL input (an integral, FLOAT or
 * DOUBLE one cast to its DECIMAL) rounded down or up to that many decimals, typed as round's.
 */
function floorCeil(args: readonly Typed[], c: CallCtx, up: boolean): Typed {
  if (args.length === 2) {
    const s = args[1];
    if (s.constant === undefined || s.type.type !== 'INT' || s.type.bits !== undefined || s.constant.value === null) {
      throw c.az.fail(
        'NON_FOLDABLE_ARGUMENT',
        `The function \`${c.name}\` requires the parameter \`scale\` to be a foldable expression of the type "INT", but the actual argument is ${s.sql}: write the scale as an INT literal`,
        c.pos,
      );
    }
    let x = args[0];
    if (x.type.type === 'STRING' || x.type.type === 'NULL') x = implicitCast(x, decimal(MAX_PRECISION, 18));
    else if (isIntegral(x.type)) x = implicitCast(x, asDecimal(x.type));
    // a FLOAT or DOUBLE is cast to its DECIMAL too (AnsiTypeCoercion.implicitCast: DecimalType.forType, DECIMAL(14,7) / DECIMAL(30,15))
    else if (x.type.type === 'DOUBLE') x = implicitCast(x, x.type.binary32 ? decimal(14, 7) : decimal(30, 15));
    else if (x.type.type !== 'DECIMAL') {
      throw c.az.mismatch(
        'UNEXPECTED_INPUT_TYPE',
        c.sql,
        `argument 1 of ${c.name} with a scale requires the "DECIMAL" type, however ${x.sql} has the type "${typeName(x.type)}"; cast it to a DECIMAL`,
        c.pos,
      );
    }
    return rounding([x], c, up ? 'CEILING' : 'FLOOR', s.constant.value as number);
  }
  const x = numeric(c, args[0], 0);
  const t = x.type;
  if (t.type === 'DECIMAL' && t.scale === 0)
    return call(
      c,
      t,
      [x],
      strict((v) => v),
    );
  if (t.type === 'DECIMAL') {
    const rt = decimal(Math.min(t.precision! - t.scale! + 1, MAX_PRECISION), 0);
    const p = pow10(t.scale!);
    return call(
      c,
      rt,
      [x],
      strict((v) => {
        const u = unscaledOf(v as string);
        let q = u / p;
        if (u % p !== 0n && u < 0n !== up) q += up ? 1n : -1n;
        return formatDecimal(q, 0);
      }),
    );
  }
  if (isIntegral(t))
    return call(
      c,
      LONG,
      [x],
      strict((v) => v),
    );
  return call(
    c,
    LONG,
    [x],
    strict((v) => {
      const n = (up ? Math.ceil(v as number) : Math.floor(v as number)) + 0; // (a LONG: ceil(-0.5) is 0, not -0)
      if (Number.isNaN(n)) return 0;
      if (Number.isSafeInteger(n)) return n;
      // Java's (long) of a double saturates at Long's bounds
      const b = n >= 2 ** 63 ? 2n ** 63n - 1n : n <= -(2 ** 63) ? -(2n ** 63n) : BigInt(n);
      return longValue(b);
    }),
  );
}

/** A function of no argument that is a DOUBLE constant (pi(), e()). */
function constant(value: number): FunctionDef {
  return def(0, 0, (_, c) => call(c, DOUBLE, [], () => () => value));
}

/** A DOUBLE function of DOUBLE arguments, null when `f` gives undefined (Spark's null for log of a non-positive number). */
function math(arity: number, f: (...xs: number[]) => number | null): FunctionDef {
  return def(arity, arity, (args, c) =>
    call(
      c,
      DOUBLE,
      args.map((a, i) => double(c, a, i)),
      strict((...xs) => f(...(xs as number[]))),
    ),
  );
}

function abs(args: readonly Typed[], c: CallCtx): Typed {
  const x = numeric(c, args[0], 0);
  const t = x.type;
  if (t.type === 'DECIMAL')
    return call(
      c,
      t,
      [x],
      strict((v) => ((v as string).startsWith('-') ? (v as string).slice(1) : v)),
    );
  if (isIntegral(t))
    return call(
      c,
      t,
      [x],
      strict((v) =>
        checkIntegral(
          typeof v === 'bigint' ? (v < 0n ? -v : v) : Math.abs(v as number),
          t,
          c.sql,
          'Spark has no tolerant form of abs: cast the argument to a wider type (BIGINT, DECIMAL) first.',
        ),
      ),
    );
  return call(
    c,
    t,
    [x],
    strict((v) => Math.abs(v as number)),
  );
}

function pmod(args: readonly Typed[], c: CallCtx): Typed {
  const m = c.az.binary('%', args[0], args[1], c.pos);
  const t = m.type;
  const nType = m.children[1].type;
  // Spark's pmod: r = a % n; r < 0 ? (r + n) % n : r, in the type of a % n
  return {
    ...m,
    sql: c.sql,
    name: c.sql,
    build: (evs) => {
      const rem = m.build(evs);
      const nEval = evs[1];
      return (row) => {
        const r = rem(row);
        if (r == null) return null;
        const n = nEval(row);
        if (t.type === 'DECIMAL') {
          const ru = unscaledOf(r as string);
          if (ru >= 0n) return r;
          const nu = rescale(unscaledOf(n as string), nType.scale!, t.scale!);
          return formatDecimal((ru + nu) % nu, t.scale!);
        }
        if (typeof r === 'bigint' || typeof n === 'bigint') {
          const rb = big(r);
          const nb = big(n);
          return longValue(rb < 0n ? (rb + nb) % nb : rb);
        }
        const x = r as number;
        const y = n as number;
        return x < 0 ? (x + y) % y : x;
      };
    },
  };
}

/** if / nvl2: the second argument when the first passes `test` (TRUE, or not NULL), else the third, in their common type. */
function choice(c: CallCtx, first: Typed, branches: readonly [Typed, Typed], test: '=== true' | '!= null'): Typed {
  const { args: vs, type } = common(branches, c);
  const passes = test === '=== true' ? (v: unknown) => v === true : (v: unknown) => v != null;
  return call(
    c,
    type,
    [first, ...vs],
    withJs(
      ([t, x, y]) =>
        (row) =>
          passes(t(row)) ? x(row) : y(row),
      ([t, x, y]) => `(${t} ${test} ? ${x} : ${y})`,
    ),
  );
}

function generator(kind: 'explode' | 'explode_outer' | 'posexplode' | 'posexplode_outer'): FunctionDef {
  return def(1, 1, ([a], c) => {
    const t = a.type;
    if (t.type !== 'ARRAY' && t.type !== 'MAP') {
      throw c.az.mismatch('UNEXPECTED_INPUT_TYPE', c.sql, `${c.name} takes an ARRAY or a MAP, however ${a.sql} has the type "${typeName(t)}"`, c.pos);
    }
    const pos = kind.startsWith('pos') ? [{ name: 'pos', type: { type: 'INT' } as SqlType }] : [];
    const columns =
      t.type === 'ARRAY'
        ? [...pos, { name: 'col', type: t.element! }]
        : [...pos, { name: 'key', type: t.key ?? ({ type: 'STRING' } as SqlType) }, { name: 'value', type: t.value! }];
    return { type: t, sql: c.sql, name: c.sql, children: [a], build: ([e]) => e, generator: { kind, columns } };
  });
}

export const FUNCTIONS: Record<string, FunctionDef> = {
  coalesce: def(1, Number.POSITIVE_INFINITY, coalesce),
  nvl: def(2, 2, coalesce),
  ifnull: def(2, 2, coalesce),
  // Spark's NullIf is If(EqualTo(a, b), NULL, a): the comparison coerces both sides, the result keeps a's type
  nullif: def(2, 2, ([a, b], c) => {
    const eq = c.az.binary('=', a, b, c.pos);
    return call(
      c,
      a.type,
      [a, eq],
      ([v, e]) =>
        (row) =>
          e(row) === true ? null : v(row),
    );
  }),
  nvl2: def(3, 3, ([a, b, d], c) => choice(c, a, [b, d], '!= null')),
  if: def(3, 3, ([cond, a, b], c) => choice(c, c.az.implicitBoolean(cond, c.sql, c.pos), [a, b], '=== true')),
  isnull: def(1, 1, ([a], c) =>
    call(
      c,
      BOOLEAN,
      [a],
      ([e]) =>
        (row) =>
          e(row) == null,
    ),
  ),
  isnotnull: def(1, 1, ([a], c) =>
    call(
      c,
      BOOLEAN,
      [a],
      ([e]) =>
        (row) =>
          e(row) != null,
    ),
  ),
  greatest: def(2, Number.POSITIVE_INFINITY, (args, c) => greatestLeast(args, c, 1)),
  least: def(2, Number.POSITIVE_INFINITY, (args, c) => greatestLeast(args, c, -1)),
  abs: def(1, 1, abs),
  round: def(1, 2, (args, c) => rounding(args, c, 'HALF_UP')),
  bround: def(1, 2, (args, c) => rounding(args, c, 'HALF_EVEN')),
  floor: def(1, 2, (args, c) => floorCeil(args, c, false)),
  ceil: def(1, 2, (args, c) => floorCeil(args, c, true)),
  ceiling: def(1, 2, (args, c) => floorCeil(args, c, true)),
  pow: math(2, (x, y) => x ** y),
  power: math(2, (x, y) => x ** y),
  sqrt: math(1, Math.sqrt),
  cbrt: math(1, Math.cbrt),
  // java.lang.Math's functions, as Spark's (V8's are fdlibm's, as StrictMath's)
  sin: math(1, Math.sin),
  cos: math(1, Math.cos),
  tan: math(1, Math.tan),
  cot: math(1, (x) => 1 / Math.tan(x)),
  asin: math(1, Math.asin),
  acos: math(1, Math.acos),
  atan: math(1, Math.atan),
  // Spark adds 0.0 to both, so -0.0 counts as 0.0
  atan2: math(2, (y, x) => Math.atan2(y + 0, x + 0)),
  sinh: math(1, Math.sinh),
  cosh: math(1, Math.cosh),
  tanh: math(1, Math.tanh),
  // Spark's own formulas (not java.lang.Math's acosh...: there is none), so large and tiny inputs
  // round as Spark's do: acosh(1e200) is Infinity there too (x * x overflows)
  acosh: math(1, (x) => Math.log(x + Math.sqrt(x * x - 1))),
  asinh: math(1, (x) => (x === Number.NEGATIVE_INFINITY ? x : Math.log(x + Math.sqrt(x * x + 1)))),
  atanh: math(1, (x) => 0.5 * (Math.log1p(x) - Math.log1p(-x))),
  sec: math(1, (x) => 1 / Math.cos(x)),
  csc: math(1, (x) => 1 / Math.sin(x)),
  // Math.toDegrees / toRadians multiply by these constants (Java 9+)
  degrees: math(1, (x) => x * 57.29577951308232),
  radians: math(1, (x) => x * 0.017453292519943295),
  pi: constant(Math.PI),
  e: constant(Math.E),
  isnan: def(1, 1, ([a], c) => {
    const x = double(c, a, 0);
    return call(c, BOOLEAN, [x], ([ev]) => (row) => {
      const v = ev(row);
      // null is not NaN: false, not null (Spark's IsNaN)
      return typeof v === 'number' && Number.isNaN(v);
    });
  }),
  nanvl: def(2, 2, ([a, b], c) =>
    call(c, DOUBLE, [double(c, a, 0), double(c, b, 1)], ([ea, eb]) => (row) => {
      const v = ea(row);
      if (v == null) return null;
      return Number.isNaN(v) ? (eb(row) ?? null) : v;
    }),
  ),
  exp: math(1, Math.exp),
  ln: math(1, (x) => (x <= 0 ? null : Math.log(x))),
  log10: math(1, (x) => (x <= 0 ? null : Math.log10(x))),
  // Spark: StrictMath.log(x) / StrictMath.log(2), not a base-2 log (log2(536870912) is 29.000000000000004)
  log2: math(1, (x) => (x <= 0 ? null : Math.log(x) / Math.log(2))),
  log: def(1, 2, (args, c) => {
    const xs = args.map((a, i) => double(c, a, i));
    if (xs.length === 1)
      return call(
        c,
        DOUBLE,
        xs,
        strict((x) => ((x as number) <= 0 ? null : Math.log(x as number))),
      );
    return call(
      c,
      DOUBLE,
      xs,
      strict((b, x) => ((x as number) <= 0 || (b as number) <= 0 ? null : Math.log(x as number) / Math.log(b as number))),
    );
  }),
  // Java's Math.signum: NaN, 0.0 and -0.0 are themselves
  sign: math(1, (x) => (x > 0 ? 1 : x < 0 ? -1 : x)),
  signum: math(1, (x) => (x > 0 ? 1 : x < 0 ? -1 : x)),
  mod: def(2, 2, ([a, b], c) => ({ ...c.az.binary('%', a, b, c.pos), sql: c.sql, name: c.sql })),
  pmod: def(2, 2, pmod),
  try_add: tryOf('+'),
  try_subtract: tryOf('-'),
  try_multiply: tryOf('*'),
  try_divide: tryOf('/'),
  try_mod: tryOf('%'),
  explode: generator('explode'),
  explode_outer: generator('explode_outer'),
  posexplode: generator('posexplode'),
  posexplode_outer: generator('posexplode_outer'),
  ...GENERATOR_FUNCTIONS,
  ...INPUT_FILE_FUNCTIONS,
  ...RAISE_FUNCTIONS,
  ...INTERVAL_MAKERS,
  ...STRING_FUNCTIONS,
  ...REGEXP_FUNCTIONS,
  ...COLLECTION_FUNCTIONS,
  ...ARRAY_MAP_FUNCTIONS,
  ...TEXT_FUNCTIONS,
  ...FORMAT_FUNCTIONS,
  ...NUMBER_FORMAT_FUNCTIONS,
  ...JSON_FUNCTIONS,
  ...FROM_JSON_FUNCTIONS,
  ...FROM_CSV_FUNCTIONS,
  ...TO_CSV_FUNCTIONS,
  ...SCHEMA_OF_JSON_FUNCTIONS,
  ...SCHEMA_OF_CSV_FUNCTIONS,
  ...MORE_FUNCTIONS,
  ...DATETIME_FUNCTIONS,
  ...DATETIME_CONVERSIONS,
  ...HASH_FUNCTIONS,
  ...MATH_FUNCTIONS,
};
