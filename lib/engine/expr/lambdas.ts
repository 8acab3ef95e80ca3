/**
 * Spark's higher-order functions, whose last arguments are lambdas (`x -> x + 1`, `(k, v) -> v`):
 * transform, filter, exists, forall, aggregate (and its name reduce), zip_with, array_sort over arrays, and
 * map_filter, transform_values, transform_keys, map_zip_with over maps, with Spark's types, null handling and
 * errors (higherOrderFunctions.scala).
 *
 * A lambda's body is analyzed once, with its parameters resolved before any column (a parameter
 * hides a column of the same name, case-insensitive, as in Spark) and typed from the collection:
 * the element, its 0-based index as INT, the accumulator as the zero value's type, a map's key and
 * value. Per element, the body is evaluated on a row that inherits the input row (`Object.create`)
 * and holds each parameter under a Symbol of its own, so the body reads the outer row's columns
 * too, and an inner lambda's parameters hide an outer one's. Spark names a lambda in an output
 * column `lambdafunction(body, namedlambdavariable(), ...)`, its parameters
 * `namedlambdavariable()`: the names here are the same.
 */
import type { Row } from '../ports/values';
import type { ColumnInfo } from '../plan/columns';
import { hasEntry, mapEntries, setEntry } from '../map-entries';
import { Analyzer, type AstFunction } from './analyze';
import { compileExpr } from './codegen';
import { checkKeyType, duplicatedMapKey, keyText, keyTypeOf, keyValue, mapType, nullMapKey } from './map-keys';
import type { Ast } from './parser';
import { SparkRowError } from './errors';
import type { Eval, Typed } from './typed';
import { comparator, nullsLast } from './values';
import { BOOLEAN, INT, type SqlType, sameType, typeName } from './types';

type Call = Extract<Ast, { k: 'call' }>;

/** A lambda's body evaluated on a row with its parameters' values (an absent one is null). */
type Lambda = (row: Row, a?: unknown, b?: unknown, c?: unknown) => unknown;

/** Spark's SQL text of a lambda parameter. */
const VARIABLE = 'namedlambdavariable()';

/** A lambda's body typed for its parameters, and how to evaluate it for given parameter values. */
interface Bound {
  readonly body: Typed;
  readonly sql: string;
  /** An evaluator of the body on `row` with the parameters set to `a`, `b` and `c` (a lambda takes one to three). */
  readonly evaluator: () => Lambda;
}

function bind(az: Analyzer, c: Call, at: number, types: readonly SqlType[], arities: readonly number[]): Bound {
  const lambda = c.args[at];
  if (lambda?.k !== 'lambda') {
    throw az.fail(
      'DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE',
      `Cannot resolve "${c.name}(...)" due to data type mismatch: argument ${at + 1} of ${c.name} must be a lambda function such as ${types.length === 1 ? 'x -> ...' : '(x, y) -> ...'}`,
      lambda?.pos ?? c.pos,
    );
  }
  const { params } = lambda;
  if (!arities.includes(params.length)) {
    throw az.fail(
      'INVALID_LAMBDA_FUNCTION_CALL.NUM_ARGS_MISMATCH',
      `A higher order function expects ${arities.join(' or ')} arguments, but got ${params.length}: ${c.name}'s lambda takes ${arities.join(' or ')} parameters`,
      lambda.pos,
    );
  }
  const lower = params.map((p) => p.toLowerCase());
  if (new Set(lower).size !== lower.length) {
    throw az.fail(
      'INVALID_LAMBDA_FUNCTION_CALL.DUPLICATE_ARG_NAMES',
      `The lambda function has duplicate arguments ${params.map((p) => `\`${p}\``).join(', ')}: give each parameter its own name (names are case-insensitive)`,
      lambda.pos,
    );
  }
  const keys = params.map((p) => Symbol(p));
  const outer = az.scope.refer;
  const child = new Analyzer({
    ...az.scope,
    refer: (parts, pos) => {
      const i = lower.indexOf(parts[0].toLowerCase());
      if (i < 0) return outer?.(parts, pos) ?? null;
      const key = keys[i];
      return { column: { ...types[i], name: params[i] } as ColumnInfo, used: 1, sql: VARIABLE, read: (row) => (row as Record<symbol, unknown>)[key] };
    },
  });
  const body = child.analyze(lambda.body);
  if (body.generator !== undefined) throw az.nestedGenerator(lambda.body.pos);
  return {
    body,
    sql: `lambdafunction(${body.sql}, ${params.map(() => VARIABLE).join(', ')})`,
    evaluator: () => {
      const ev = compileExpr(body);
      const [ka, kb, kc] = keys;
      return (row, a, b, c) => {
        const r = Object.create(row) as Record<symbol, unknown>;
        r[ka] = a ?? null;
        if (kb !== undefined) r[kb] = b ?? null;
        if (kc !== undefined) r[kc] = c ?? null;
        return ev(r as Row);
      };
    },
  };
}

/** The collection argument: its type must be `kind` (Spark's UNEXPECTED_INPUT_TYPE otherwise). */
function collection(az: Analyzer, c: Call, at: number, kind: 'ARRAY' | 'MAP'): Typed {
  const a = az.analyze(c.args[at]);
  if (a.type.type === kind) return a;
  if (a.type.type === 'NULL') return { ...a, type: kind === 'ARRAY' ? { type: 'ARRAY', element: { type: 'NULL' } } : { type: 'MAP', value: { type: 'NULL' } } };
  throw az.mismatch(
    'UNEXPECTED_INPUT_TYPE',
    `${c.name}(...)`,
    `argument ${at + 1} of ${c.name} requires the "${kind}" type, however ${a.sql} has the type "${typeName(a.type)}"`,
    c.pos,
  );
}

function checkBoolean(az: Analyzer, c: Call, f: Bound): void {
  if (f.body.type.type !== 'BOOLEAN' && f.body.type.type !== 'NULL') {
    throw az.mismatch(
      'UNEXPECTED_INPUT_TYPE',
      `${c.name}(...)`,
      `the lambda of ${c.name} must return "BOOLEAN", however ${f.body.sql} has the type "${typeName(f.body.type)}"`,
      c.pos,
    );
  }
}

/** A node over `children` whose value `make` computes (null when the first child is null). */
function node(type: SqlType, sql: string, children: readonly Typed[], make: () => (values: readonly unknown[], row: Row) => unknown): Typed {
  return {
    type,
    sql,
    name: sql,
    children,
    build: (evs: readonly Eval[]) => {
      const f = make();
      return (row) => {
        const values = evs.map((e) => e(row));
        return values[0] == null ? null : f(values, row);
      };
    },
  };
}

/** Elements with their 0-based index when the lambda takes two parameters. */
function arrayFunction(
  az: Analyzer,
  c: Call,
  result: (element: SqlType, f: Bound) => SqlType,
  run: (xs: readonly unknown[], f: Lambda, row: Row) => unknown,
  predicate: boolean,
): Typed {
  const arr = collection(az, c, 0, 'ARRAY');
  const f = bind(az, c, 1, [arr.type.element!, INT], [1, 2]);
  if (predicate) checkBoolean(az, c, f);
  return node(result(arr.type.element!, f), `${c.name}(${arr.sql}, ${f.sql})`, [arr], () => {
    const ev = f.evaluator();
    return ([xs], row) => run(xs as unknown[], ev, row);
  });
}

/**
 * exists (`decides` true) and forall (false): `decides` as soon as an element's lambda gives it;
 * else null when one gave null, else the other value (Spark 3's three-valued logic, and
 * spark.sql.legacy.followThreeValuedLogicInArrayExists's default for exists).
 */
function threeValued(decides: boolean): (xs: readonly unknown[], f: Lambda, row: Row) => boolean | null {
  return (xs, f, row) => {
    let sawNull = false;
    for (let i = 0; i < xs.length; i++) {
      const v = f(row, xs[i], i);
      if (v === decides) return decides;
      if (v == null) sawNull = true;
    }
    return sawNull ? null : !decides;
  };
}

/** aggregate(array, zero, (acc, x) -> merge[, acc -> finish]): the merge must give the zero's type. */
function aggregate(az: Analyzer, c: Call): Typed {
  const arr = collection(az, c, 0, 'ARRAY');
  const zero = az.analyze(c.args[1]);
  const merge = bind(az, c, 2, [zero.type, arr.type.element!], [2]);
  if (!sameType(merge.body.type, zero.type) && merge.body.type.type !== 'NULL') {
    throw az.mismatch(
      'UNEXPECTED_INPUT_TYPE',
      `${c.name}(...)`,
      `argument 3 of ${c.name} requires the "${typeName(zero.type)}" type (the zero value's), however ${merge.body.sql} has the type "${typeName(merge.body.type)}": cast the zero value to "${typeName(merge.body.type)}" (e.g. 0D, 0L, CAST(0 AS DECIMAL(10,2)))`,
      c.pos,
    );
  }
  const finish = c.args.length === 4 ? bind(az, c, 3, [zero.type], [1]) : null;
  const sql = `${c.name}(${arr.sql}, ${zero.sql}, ${merge.sql}${finish ? `, ${finish.sql}` : ''})`;
  return {
    type: finish ? finish.body.type : zero.type,
    sql,
    name: sql,
    children: [arr, zero],
    build: ([arrEv, zeroEv]: readonly Eval[]) => {
      const m = merge.evaluator();
      const fin = finish?.evaluator();
      return (row) => {
        const xs = arrEv(row) as unknown[] | null;
        if (xs == null) return null;
        let acc = zeroEv(row);
        for (const x of xs) acc = m(row, acc, x);
        return fin ? fin(row, acc) : acc;
      };
    },
  };
}

/** zip_with(a, b, (x, y) -> ...): element by element, the shorter array padded with nulls. */
function zipWith(az: Analyzer, c: Call): Typed {
  const a = collection(az, c, 0, 'ARRAY');
  const b = collection(az, c, 1, 'ARRAY');
  const f = bind(az, c, 2, [a.type.element!, b.type.element!], [2]);
  return pairNode({ type: 'ARRAY', element: f.body.type }, `${c.name}(${a.sql}, ${b.sql}, ${f.sql})`, a, b, () => {
    const ev = f.evaluator();
    return (xs, ys, row) => {
      const n = Math.max((xs as unknown[]).length, (ys as unknown[]).length);
      const out = new Array<unknown>(n);
      for (let i = 0; i < n; i++) out[i] = ev(row, (xs as unknown[])[i], (ys as unknown[])[i]);
      return out;
    };
  });
}

/** A node over two collections whose value `make` computes from both (null when either is null). */
function pairNode(type: SqlType, sql: string, a: Typed, b: Typed, make: () => (x: unknown, y: unknown, row: Row) => unknown): Typed {
  return {
    type,
    sql,
    name: sql,
    children: [a, b],
    build: ([aEv, bEv]: readonly Eval[]) => {
      const f = make();
      return (row) => {
        const x = aEv(row);
        const y = bEv(row);
        return x == null || y == null ? null : f(x, y, row);
      };
    },
  };
}

/** map_filter, transform_values, transform_keys: the lambda takes (key, value), keys as their type. */
function mapFunction(az: Analyzer, c: Call, kind: 'filter' | 'values' | 'keys'): Typed {
  const m = collection(az, c, 0, 'MAP');
  const kt = keyTypeOf(m.type);
  const vt = m.type.value!;
  const f = bind(az, c, 1, [kt, vt], [2]);
  if (kind === 'filter') checkBoolean(az, c, f);
  if (kind === 'keys') checkKeyType({ name: c.name, pos: c.pos, sql: `${c.name}(...)`, az }, f.body.type);
  const type = kind === 'filter' ? m.type : kind === 'values' ? mapType(kt, f.body.type) : mapType(f.body.type, vt);
  const keyOf = keyValue(kt);
  const textOf = keyText(kind === 'keys' ? f.body.type : kt);
  return node(type, `${c.name}(${m.sql}, ${f.sql})`, [m], () => {
    const ev = f.evaluator();
    return ([v], row) => {
      const out: Record<string, unknown> = {};
      for (const [text, x] of mapEntries(v as object)) {
        const k = keyOf(text);
        const y = ev(row, k, x);
        if (kind === 'filter') {
          if (y === true) setEntry(out, text, x);
        } else if (kind === 'values') setEntry(out, text, y);
        else {
          if (y == null) throw nullMapKey();
          const t = textOf(y);
          if (hasEntry(out, t)) throw duplicatedMapKey(y);
          setEntry(out, t, x);
        }
      }
      return out;
    };
  });
}

/**
 * map_zip_with(m1, m2, (k, v1, v2) -> ...): one entry per key of either map, m1's keys in their
 * order and then m2's others in theirs, the value the lambda's of the key and its value in each
 * map (null where that map lacks it). The two key types must be the same.
 */
function mapZipWith(az: Analyzer, c: Call): Typed {
  const m1 = collection(az, c, 0, 'MAP');
  const m2 = collection(az, c, 1, 'MAP');
  const kt = keyTypeOf(m1.type);
  const kt2 = keyTypeOf(m2.type);
  if (!sameType(kt, kt2)) {
    throw az.mismatch(
      'MAP_ZIP_WITH_DIFF_TYPES',
      `${c.name}(...)`,
      `Input to the \`map_zip_with\` should have been two maps with compatible key types, but it's ["${typeName(m1.type)}", "${typeName(m2.type)}"]: cast one map's keys to the other's type`,
      c.pos,
    );
  }
  const f = bind(az, c, 2, [kt, m1.type.value!, m2.type.value!], [3]);
  const keyOf = keyValue(kt);
  return pairNode(mapType(kt, f.body.type), `${c.name}(${m1.sql}, ${m2.sql}, ${f.sql})`, m1, m2, () => {
    const ev = f.evaluator();
    return (a, b, row) => {
      const right = new Map(mapEntries(b as object));
      const out: Record<string, unknown> = {};
      for (const [text, x] of mapEntries(a as object)) setEntry(out, text, ev(row, keyOf(text), x, right.get(text)));
      for (const [text, y] of right) if (!hasEntry(out, text)) setEntry(out, text, ev(row, keyOf(text), null, y));
      return out;
    };
  });
}

/**
 * array_sort(array[, (left, right) -> INT]): ascending with nulls last, or by the comparator
 * (negative, 0, positive; a null from it is Spark's COMPARATOR_RETURNS_NULL). Stable, as Java's sort.
 */
function arraySort(az: Analyzer, c: Call): Typed {
  const arr = collection(az, c, 0, 'ARRAY');
  const el = arr.type.element!;
  if (c.args.length === 1) {
    if (el.type === 'MAP') {
      throw az.mismatch(
        'INVALID_ORDERING_TYPE',
        `${c.name}(...)`,
        `\`${c.name}\` does not support ordering on type "${typeName(el)}": give a comparator lambda`,
        c.pos,
      );
    }
    const cmp = nullsLast(comparator(el));
    const sql = `array_sort(${arr.sql})`;
    return node(
      arr.type,
      sql,
      [arr],
      () =>
        ([xs]) =>
          [...(xs as unknown[])].sort(cmp),
    );
  }
  const f = bind(az, c, 1, [el, el], [2]);
  if (f.body.type.type !== 'INT' || f.body.type.bits !== undefined) {
    throw az.mismatch(
      'UNEXPECTED_RETURN_TYPE',
      `${c.name}(...)`,
      `the comparator of array_sort must return "INT" (negative, 0 or positive), however ${f.body.sql} has the type "${typeName(f.body.type)}"`,
      c.pos,
    );
  }
  return node(arr.type, `${c.name}(${arr.sql}, ${f.sql})`, [arr], () => {
    const ev = f.evaluator();
    return ([xs], row) =>
      [...(xs as unknown[])].sort((a, b) => {
        const r = ev(row, a, b);
        if (r == null) {
          throw new SparkRowError(
            'COMPARATOR_RETURNS_NULL',
            `The comparator has returned a NULL for a comparison between ${String(a)} and ${String(b)}. It should return a positive integer for "greater than", 0 for "equal" and a negative integer for "less than".`,
          );
        }
        return r as number;
      });
  });
}

/** The higher-order functions by name, with their counts of arguments. */
export const HIGHER_ORDER_FUNCTIONS: Readonly<Record<string, AstFunction>> = {
  transform: {
    args: [2, 2],
    resolve: (az, c) =>
      arrayFunction(
        az,
        c,
        (_, f) => ({ type: 'ARRAY', element: f.body.type }),
        (xs, f, row) => xs.map((x, i) => f(row, x, i)),
        false,
      ),
  },
  filter: {
    args: [2, 2],
    resolve: (az, c) =>
      arrayFunction(
        az,
        c,
        (element) => ({ type: 'ARRAY', element }),
        (xs, f, row) => xs.filter((x, i) => f(row, x, i) === true),
        true,
      ),
  },
  exists: { args: [2, 2], resolve: (az, c) => arrayFunction(az, c, () => BOOLEAN, threeValued(true), true) },
  forall: { args: [2, 2], resolve: (az, c) => arrayFunction(az, c, () => BOOLEAN, threeValued(false), true) },
  aggregate: { args: [3, 4], resolve: aggregate },
  reduce: { args: [3, 4], resolve: aggregate },
  zip_with: { args: [3, 3], resolve: zipWith },
  array_sort: { args: [1, 2], resolve: arraySort },
  map_filter: { args: [2, 2], resolve: (az, c) => mapFunction(az, c, 'filter') },
  transform_values: { args: [2, 2], resolve: (az, c) => mapFunction(az, c, 'values') },
  transform_keys: { args: [2, 2], resolve: (az, c) => mapFunction(az, c, 'keys') },
  map_zip_with: { args: [3, 3], resolve: mapZipWith },
};
