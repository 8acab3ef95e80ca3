/**
 * The analyzer: resolves a parsed expression against the input columns (case-insensitively, as
 * Spark) and types every node with Spark 4's ANSI rules — implicit casts, numeric widening, DECIMAL
 * result types, three-valued logic — refusing what Spark refuses with its error class
 * (UNRESOLVED_COLUMN.WITH_SUGGESTION, DATATYPE_MISMATCH.*, UNRESOLVED_ROUTINE...), the position
 * in the text and the fix. The result is a typed tree (typed.ts) ready to compile.
 */
import { HIGHER_ORDER_FUNCTIONS } from './lambdas';
import { unitFunction } from './timestamp-units';
import type { ColumnInfo } from '../plan/columns';
import { PARTITION_HINT } from '../plan/paths';
import type { Row } from '../ports/values';
import { addSub, mulDiv, numericOperands } from './arithmetic';
import { compare, inList, isTest, likeTest } from './comparisons';
import { castFunction, canCast, castRefusal } from './cast';
import { ExpressionError, SparkRowError } from './errors';
import { FUNCTIONS, NON_DETERMINISTIC, AGGREGATES } from './functions';
import { METADATA_COLUMN, metadataColumn } from './input-file';
import type { Ast } from './parser';
import { columnBuilder, constantBuilder, strict, type Typed, withJs } from './typed';
import { BOOLEAN, commonType, DOUBLE, isIntegral, isNumeric, STRING, type SqlType, sameType, stringPromotion, typeName, WINDOW_TYPE } from './types';
import { big, checkIntegral, javaDoubleText, longValue } from './values';
import { keyText, keyTypeOf } from './map-keys';
import { entryValue } from '../map-entries';
import { javaDecimalText } from '../decimal';
import { callSql } from './call-sql';
import { resolveName } from '../resolve-name';

/** Where an expression is analyzed: its text (for positions in messages) and the columns it may name. */
export interface Scope {
  readonly text: string;
  readonly columns: readonly ColumnInfo[];
  /**
   * Resolves a name itself when set (a join condition's `left.x` / `right.x`): the column, how
   * many of the name's parts it used, its SQL text and how a row's value is read. Null: the name
   * is resolved among `columns` as usual.
   */
  readonly refer?: (parts: readonly string[], pos: number) => ColumnReference | null;
  /**
   * Spark's pretty form (toPrettySQL, the name of an expression without AS): a literal prints as
   * its value (1L as 1, 1.5D as 1.5, 1e3 as 1000.0, 'a' as a), so every `sql` built from it does.
   */
  readonly pretty?: boolean;
  /**
   * A `*` or `s.*` argument of a function call expands to the columns (the STRUCT's fields), as
   * Spark expands it in a Project or an Aggregate (`to_json(struct(*))`, `hash(*)`); a filter's
   * condition keeps it, and Spark refuses it there (INVALID_USAGE_OF_STAR_OR_REGEX).
   */
  readonly stars?: boolean;
}

/** A name a Scope's `refer` resolved. */
export interface ColumnReference {
  readonly column: ColumnInfo;
  readonly used: number;
  readonly sql: string;
  readonly read: (row: Row) => unknown;
}

export class Analyzer {
  constructor(readonly scope: Scope) {}

  fail(errorClass: string, message: string, pos?: number): ExpressionError {
    return new ExpressionError(errorClass, message, this.scope.text, pos);
  }

  mismatch(sub: string, sql: string, why: string, pos: number): ExpressionError {
    return this.fail(`DATATYPE_MISMATCH.${sub}`, `Cannot resolve "${sql}" due to data type mismatch: ${why}`, pos);
  }

  /** How deep analyze is in the expression: 1 at its root. */
  private depth = 0;

  /**
   * The typed node of an expression. A generator (explode, stack...) is a select's item, never an
   * argument of another expression: Spark refuses `size(explode(arr))` as
   * UNSUPPORTED_GENERATOR.NESTED_IN_EXPRESSIONS, checked here before the parent types its arguments.
   */
  analyze(ast: Ast): Typed {
    this.depth++;
    try {
      const t = this.node(ast);
      if (t.generator !== undefined && this.depth > 1) throw this.nestedGenerator(ast.pos);
      return t;
    } finally {
      this.depth--;
    }
  }

  nestedGenerator(pos: number): ExpressionError {
    return this.fail(
      'UNSUPPORTED_GENERATOR.NESTED_IN_EXPRESSIONS',
      `The generator is not supported: nested in expressions "${this.scope.text}"; explode in a select of its own first and use its column after it: selectExpr("*", "explode(arr) AS x"), then "size(x)"`,
      pos,
    );
  }

  private node(ast: Ast): Typed {
    switch (ast.k) {
      case 'lit':
        return literal(ast.value, ast.type, this.scope.pretty ? prettyLiteral(ast.value, ast.type, ast.sql) : ast.sql);
      case 'name':
        return this.name(ast.parts, ast.pos);
      case 'star':
        throw this.fail(
          'INVALID_USAGE_OF_STAR_OR_REGEX',
          `Invalid usage of '*' in an expression: '*' and 's.*' are only a whole selectExpr item (or count(*)); name the columns instead`,
          ast.pos,
        );
      case 'field': {
        // a field of an expression that is not a column path (arr[0].f, from_json(...).x): Spark names it
        // by its SQL text (ResolveAliases: toPrettySQL), not by the field as it does a column path s.f
        const t = this.extractField(this.analyze(ast.base), ast.name, ast.pos);
        return { ...t, name: t.sql, fieldName: ast.name };
      }
      case 'index':
        return this.index(this.analyze(ast.base), this.analyze(ast.index), ast.pos);
      case 'unary':
        return this.unary(ast.op, this.analyze(ast.arg), ast.pos);
      case 'binary':
        return this.binary(ast.op, this.analyze(ast.left), this.analyze(ast.right), ast.pos);
      case 'is':
        return isTest(this, ast.what, ast.not, this.analyze(ast.arg), ast.pos);
      case 'in':
        return inList(
          this,
          this.analyze(ast.arg),
          ast.list.map((a) => this.analyze(a)),
          ast.not,
          ast.pos,
        );
      case 'between': {
        const arg = this.analyze(ast.arg);
        const lo = this.analyze(ast.lo);
        const hi = this.analyze(ast.hi);
        const both = this.binary('AND', this.binary('>=', arg, lo, ast.pos), this.binary('<=', arg, hi, ast.pos), ast.pos);
        // Spark 4's Between prints as a function; NOT BETWEEN is its negation
        const sql = ast.not ? `(NOT between(${arg.sql}, ${lo.sql}, ${hi.sql}))` : `between(${arg.sql}, ${lo.sql}, ${hi.sql})`;
        const node = ast.not ? this.unary('NOT', both, ast.pos) : both;
        return { ...node, sql, name: sql };
      }
      case 'like':
        return likeTest(this, ast.op, this.analyze(ast.arg), this.analyze(ast.pattern), ast.not, ast.escapeChar, ast.pos);
      case 'case':
        return this.caseWhen(ast);
      case 'cast':
        return this.cast(this.analyze(ast.arg), ast.to, ast.safe, ast.pos);
      case 'call':
        return this.call(ast);
      case 'lambda':
        throw this.fail(
          'INVALID_LAMBDA_FUNCTION_CALL.NON_HIGHER_ORDER_FUNCTION',
          `A lambda function should only be used in a higher order function (${higherOrderNames()}), not here: ${ast.params.join(', ')} -> ...`,
          ast.pos,
        );
    }
  }

  /**
   * `*`: every input column; `s.*`: the fields of STRUCT s (CANNOT_RESOLVE_STAR_EXPAND for another
   * type), each with the name it takes as a column of its own.
   */
  expandStar(ast: Extract<Ast, { k: 'star' }>): { readonly name: string; readonly typed: Typed; readonly ref?: ColumnInfo }[] {
    if (ast.qualifier.length === 0) return this.scope.columns.map((c) => ({ name: c.name, ref: c, typed: columnRef(c) }));
    const base = this.name(ast.qualifier, ast.pos);
    if (base.type.type !== 'STRUCT') {
      throw this.fail(
        'CANNOT_RESOLVE_STAR_EXPAND',
        `Cannot resolve ${ast.qualifier.map((p) => `\`${p}\``).join('.')}.* given input columns ${this.scope.columns.map((c) => `\`${c.name}\``).join(', ')}: ${base.sql} is "${typeName(base.type)}", not a STRUCT`,
        ast.pos,
      );
    }
    return base.type.fields!.map((f) => ({ name: f.name, typed: this.extractField(base, f.name, ast.pos) }));
  }

  /** `a`, `a.b.c`: a column (case-insensitive), then fields of a STRUCT (or keys of a MAP). */
  private name(parts: readonly string[], pos: number): Typed {
    const ref = this.scope.refer?.(parts, pos) ?? null;
    if (ref !== null) {
      const c = ref.column;
      let t: Typed = { type: c.window ? WINDOW_TYPE : c, sql: ref.sql, name: c.name, children: [], build: () => (row) => ref.read(row) ?? null };
      for (const p of parts.slice(ref.used)) t = this.extractField(t, p, pos);
      return t;
    }
    const lower = parts[0].toLowerCase();
    // a file source's hidden _metadata column, unless a column of the input has the name (input-file.ts)
    if (lower === METADATA_COLUMN && !this.scope.columns.some((c) => c.name.toLowerCase() === lower)) {
      let m = metadataColumn();
      for (const p of parts.slice(1)) m = this.extractField(m, p, pos);
      return m;
    }
    const col = this.resolveColumn(parts[0], parts, pos);
    let t: Typed = columnRef(col);
    for (const p of parts.slice(1)) t = this.extractField(t, p, pos);
    return t;
  }

  resolveColumn(name: string, parts: readonly string[], pos: number): ColumnInfo {
    const lower = name.toLowerCase();
    const matches = this.scope.columns.filter((c) => c.name.toLowerCase() === lower);
    if (matches.length === 1) return matches[0];
    if (matches.length > 1) {
      throw this.fail(
        'AMBIGUOUS_REFERENCE',
        `Reference \`${name}\` is ambiguous, could be: ${matches.map((c) => `\`${c.name}\``).join(', ')}: rename one of the columns`,
        pos,
      );
    }
    const full = parts.map((p) => `\`${p}\``).join('.');
    const suggestions = suggest(
      name,
      this.scope.columns.map((c) => c.name),
    );
    throw this.fail(
      'UNRESOLVED_COLUMN.WITH_SUGGESTION',
      `A column, variable, or function parameter with name ${full} cannot be resolved. Did you mean one of the following? [${suggestions.map((s) => `\`${s}\``).join(', ')}]: fix the name, or add the column to the schema ${PARTITION_HINT}`,
      pos,
    );
  }

  extractField(base: Typed, name: string, pos: number): Typed {
    const t = base.type;
    if (t.type === 'STRUCT') {
      const f = resolveName(t.fields!, name);
      if (f === undefined) {
        throw this.fail(
          'FIELD_NOT_FOUND',
          `No such struct field \`${name}\` in ${t.fields!.map((x) => `\`${x.name}\``).join(', ')}: fix the field's name in ${base.sql}`,
          pos,
        );
      }
      const key = f.name;
      return {
        type: f,
        sql: `${base.sql}.${key}`,
        name: key,
        children: [base],
        build: withJs(
          ([b]) =>
            (row) => {
              const v = b(row) as Record<string, unknown> | null;
              return v == null ? null : (v[key] ?? null);
            },
          ([b], g) => {
            const v = g.tmp();
            return `((${v} = ${b}) == null ? null : (${v}[${JSON.stringify(key)}] ?? null))`;
          },
        ),
      };
    }
    if (t.type === 'MAP') {
      return { ...this.index(base, literal(name, STRING, `'${name}'`), pos), name };
    }
    if (t.type === 'ARRAY' && t.element!.type === 'STRUCT') {
      // Spark's GetArrayStructFields: the field of every element, an ARRAY (a null element gives null)
      const fields = t.element!.fields!;
      const f = resolveName(fields, name);
      if (f === undefined) {
        throw this.fail(
          'FIELD_NOT_FOUND',
          `No such struct field \`${name}\` in ${fields.map((x) => `\`${x.name}\``).join(', ')}: fix the field's name in ${base.sql}`,
          pos,
        );
      }
      const key = f.name;
      const { name: _field, ...element } = f;
      return {
        type: { type: 'ARRAY', element },
        sql: `${base.sql}.${key}`,
        name: key,
        children: [base],
        build:
          ([b]) =>
          (row) => {
            const v = b(row) as Array<Record<string, unknown> | null> | null;
            return v == null ? null : v.map((e) => (e == null ? null : (e[key] ?? null)));
          },
      };
    }
    throw this.fail(
      'INVALID_EXTRACT_BASE_FIELD_TYPE',
      `Can't extract a value from ${base.sql}: the type is "${typeName(t)}", not a STRUCT or MAP; remove .${name}`,
      pos,
    );
  }

  /** `a[i]` (0-based; ANSI: out of bounds is INVALID_ARRAY_INDEX), `m['k']` (a missing key is null), `s['field']`. */
  private index(base: Typed, index: Typed, pos: number): Typed {
    const t = base.type;
    if (t.type === 'ARRAY') {
      const i = this.implicit(index, { type: 'INT' }, pos, 'the index');
      const sql = `${base.sql}[${index.sql}]`;
      return {
        type: t.element!,
        sql,
        name: sql,
        children: [base, i],
        build: strict((a, n) => {
          const arr = a as unknown[];
          const k = n as number;
          if (k < 0 || k >= arr.length) {
            throw new SparkRowError(
              'INVALID_ARRAY_INDEX',
              `The index ${k} is out of bounds. The array has ${arr.length} elements. Use the SQL function \`get()\` or \`try_element_at\` to tolerate accessing element at invalid index and return NULL instead.`,
            );
          }
          return arr[k] ?? null;
        }),
      };
    }
    if (t.type === 'MAP') {
      // the key is cast to the map's key type, then found by its text (map-keys.ts)
      const kt = keyTypeOf(t);
      const text = keyText(kt);
      const k = this.implicit(index, kt, pos, 'the key');
      const sql = `${base.sql}[${index.constant ? String(index.constant.value) : index.sql}]`;
      return {
        type: t.value!,
        sql,
        name: sql,
        ...(typeof index.constant?.value === 'string' ? { fieldName: index.constant.value } : {}),
        children: [base, k],
        build: strict((m, key) => entryValue(m as object, text(key)) ?? null),
      };
    }
    if (t.type === 'STRUCT' && index.constant && typeof index.constant.value === 'string') {
      // st['f'] is an extraction, not a column path: Spark names it by its SQL text, st.f
      const f = this.extractField(base, index.constant.value, pos);
      return { ...f, name: f.sql, fieldName: index.constant.value };
    }
    throw this.mismatch(
      'UNEXPECTED_INPUT_TYPE',
      `${base.sql}[${index.sql}]`,
      `${base.sql} is "${typeName(t)}"; only an ARRAY, a MAP or a STRUCT has elements`,
      pos,
    );
  }

  /**
   * `arg` as type `to`, by Spark's implicit (ANSI) cast: a NULL literal becomes a null of `to`, a
   * STRING is parsed (CAST_INVALID_INPUT when it is not a value of `to`), numbers widen. Refuses
   * what Spark would not cast implicitly.
   */
  implicit(arg: Typed, to: SqlType, pos: number, what: string): Typed {
    if (sameType(arg.type, to) || (to.type === 'INT' && !to.bits && isIntegral(arg.type) && arg.type.type === 'INT')) return arg;
    const f = arg.type;
    const ok =
      f.type === 'NULL' ||
      (f.type === 'STRING' && to.type !== 'STRING' && to.type !== 'ARRAY' && to.type !== 'MAP' && to.type !== 'STRUCT') ||
      (isNumeric(f) && isNumeric(to)) ||
      (f.type === 'DATE' && to.type === 'TIMESTAMP') ||
      (f.type === 'TIMESTAMP' && to.type === 'DATE') ||
      // AnsiTypeCoercion casts any atomic value to a STRING input (its implicit-cast table)
      (to.type === 'STRING' && (isNumeric(f) || f.type === 'BOOLEAN' || f.type === 'DATE' || f.type === 'TIMESTAMP')) ||
      (f.type === to.type && canCast(f, to));
    if (!ok) {
      throw this.mismatch(
        'UNEXPECTED_INPUT_TYPE',
        arg.sql,
        `${what} requires the "${typeName(to)}" type, however ${arg.sql} has the type "${typeName(f)}"; cast it explicitly if that is meant`,
        pos,
      );
    }
    return implicitCast(arg, to);
  }

  unary(op: '-' | '+' | '~' | 'NOT', arg: Typed, pos: number): Typed {
    if (op === 'NOT') {
      const a = this.implicitBoolean(arg, `(NOT ${arg.sql})`, pos);
      const sql = `(NOT ${a.sql})`;
      return { type: BOOLEAN, sql, name: sql, children: [a], build: strict((x) => !x) };
    }
    let a = arg;
    if (a.type.type === 'STRING') a = implicitCast(a, DOUBLE);
    const t = a.type;
    if (op === '+') {
      if (!isNumeric(t) && t.type !== 'INTERVAL' && t.type !== 'NULL')
        throw this.mismatch('UNEXPECTED_INPUT_TYPE', `(+ ${arg.sql})`, `unary + needs a number, not "${typeName(t)}"`, pos);
      return { ...a, sql: `(+ ${arg.sql})`, name: `(+ ${arg.sql})` };
    }
    const sql = op === '-' ? `(- ${arg.sql})` : `~${arg.sql}`;
    if (op === '~') {
      if (!isIntegral(t)) throw this.mismatch('UNEXPECTED_INPUT_TYPE', sql, `~ needs an integral type, not "${typeName(t)}"`, pos);
      return { type: t, sql, name: sql, children: [a], build: strict((x) => (t.type === 'LONG' ? longValue(~big(x)) : ~(x as number))) };
    }
    switch (t.type) {
      case 'NULL':
        return { ...a, sql, name: sql };
      case 'INT':
      case 'LONG':
        return {
          type: t,
          sql,
          name: sql,
          children: [a],
          build: strict((x) => checkIntegral(typeof x === 'bigint' ? -x : x === 0 ? 0 : -(x as number), t, sql, 'try_subtract')),
        };
      case 'DOUBLE':
        return { type: t, sql, name: sql, children: [a], build: strict((x) => -(x as number)) };
      case 'DECIMAL':
        return {
          type: t,
          sql,
          name: sql,
          children: [a],
          build: strict((x) => ((x as string).startsWith('-') ? (x as string).slice(1) : /^[0.]+$/.test(x as string) ? x : `-${x}`)),
        };
      case 'INTERVAL':
        return { type: t, sql, name: sql, children: [a], build: strict((x) => -(x as number)) };
      default:
        throw this.mismatch('UNEXPECTED_INPUT_TYPE', sql, `unary - needs a number or an interval, not "${typeName(t)}"`, pos);
    }
  }

  implicitBoolean(arg: Typed, sql: string, pos: number): Typed {
    const t = arg.type.type;
    if (t === 'BOOLEAN') return arg;
    if (t === 'NULL' || t === 'STRING') return implicitCast(arg, BOOLEAN);
    throw this.mismatch(
      'UNEXPECTED_INPUT_TYPE',
      sql,
      `${arg.sql} has the type "${typeName(arg.type)}", but a BOOLEAN is required; compare it with a value (${arg.sql} = ...) or cast it`,
      pos,
    );
  }

  binary(op: string, l: Typed, r: Typed, pos: number): Typed {
    // Spark's parser turns a <> b (and a != b) into Not(EqualTo(a, b)): its SQL text is (NOT (a = b))
    const sql = op === '<>' ? `(NOT (${l.sql} = ${r.sql}))` : `(${l.sql} ${op === 'DIV' ? 'div' : op} ${r.sql})`;
    switch (op) {
      case 'AND':
      case 'OR': {
        const a = this.implicitBoolean(l, sql, pos);
        const b = this.implicitBoolean(r, sql, pos);
        const and = op === 'AND';
        return {
          type: BOOLEAN,
          sql,
          name: sql,
          children: [a, b],
          build: withJs(
            ([x, y]) =>
              and
                ? (row) => {
                    const u = x(row);
                    if (u === false) return false;
                    const v = y(row);
                    if (v === false) return false;
                    return u == null || v == null ? null : true;
                  }
                : (row) => {
                    const u = x(row);
                    if (u === true) return true;
                    const v = y(row);
                    if (v === true) return true;
                    return u == null || v == null ? null : false;
                  },
            ([x, y], g) => {
              // three-valued: the deciding value short-circuits, else null when either is null
              const u = g.tmp();
              const v = g.tmp();
              const stop = and ? 'false' : 'true';
              return `((${u} = ${x}) === ${stop} ? ${stop} : (${v} = ${y}) === ${stop} ? ${stop} : ${u} == null || ${v} == null ? null : ${and})`;
            },
          ),
        };
      }
      case '=':
      case '<>':
      case '<':
      case '<=':
      case '>':
      case '>=':
      case '<=>':
        return compare(this, op, l, r, sql, pos);
      case '||':
        // Spark's parser turns `a || b` into Concat(a, b): its SQL text (and name) is concat(a, b)
        return this.concatOp(l, r, `concat(${l.sql}, ${r.sql})`, pos);
      case '+':
      case '-':
        return addSub(this, op, l, r, sql, pos);
      case '*':
      case '/':
      case '%':
      case 'DIV':
        return mulDiv(this, op, l, r, sql, pos);
      case '<<':
      case '>>':
      case '>>>': {
        // Spark 4's operators for shiftleft, shiftright, shiftrightunsigned, named (a << b) as written
        const name = op === '<<' ? 'shiftleft' : op === '>>' ? 'shiftright' : 'shiftrightunsigned';
        return FUNCTIONS[name].resolve([l, r], this.callCtx(name, pos, sql));
      }
      case '&':
      case '|':
      case '^': {
        const t = numericOperands(this, l, r, sql, pos);
        if (!isIntegral(t.type))
          throw this.mismatch('BINARY_OP_WRONG_TYPE', sql, `the binary operator requires the input type "INTEGRAL", not "${typeName(t.type)}"`, pos);
        const f = (x: bigint, y: bigint) => (op === '&' ? x & y : op === '|' ? x | y : x ^ y);
        return {
          type: t.type,
          sql,
          name: sql,
          children: [t.l, t.r],
          build: strict((x, y) => (t.type.type === 'LONG' ? longValue(BigInt.asIntN(64, f(big(x), big(y)))) : Number(BigInt.asIntN(32, f(big(x), big(y)))))),
        };
      }
    }
    throw this.fail('PARSE_SYNTAX_ERROR', `operator ${op} is not supported`, pos);
  }

  private concatOp(l: Typed, r: Typed, sql: string, pos: number): Typed {
    if (l.type.type === 'ARRAY' || r.type.type === 'ARRAY') return FUNCTIONS.concat.resolve([l, r], this.callCtx('concat', pos, sql));
    const a = this.toStringArg(l, sql, pos);
    const b = this.toStringArg(r, sql, pos);
    return { type: STRING, sql, name: sql, children: [a, b], build: strict((x, y) => (x as string) + (y as string)) };
  }

  /** An argument of concat / || / concat_ws as STRING: atomic values are cast to their text, as Spark's concat coercion. */
  toStringArg(a: Typed, sql: string, pos: number): Typed {
    const t = a.type.type;
    if (t === 'STRING') return a;
    if (t === 'ARRAY' || t === 'MAP' || t === 'STRUCT' || t === 'INTERVAL')
      throw this.mismatch(
        'UNEXPECTED_INPUT_TYPE',
        sql,
        `${a.sql} has the type "${typeName(a.type)}"; concatenation needs strings (cast it, or use to_json)`,
        pos,
      );
    return implicitCast(a, STRING);
  }

  /** The type two values are compared in (Spark's comparison coercion), both operands cast to it. */
  comparable(l: Typed, r: Typed, sql: string, pos: number): { l: Typed; r: Typed; type: SqlType } {
    let t: SqlType | null;
    const lt = l.type;
    const rt = r.type;
    if (lt.type === 'STRING' && rt.type !== 'STRING' && rt.type !== 'NULL') t = stringPromotion(rt);
    else if (rt.type === 'STRING' && lt.type !== 'STRING' && lt.type !== 'NULL') t = stringPromotion(lt);
    else t = commonType([lt, rt]);
    if (t === null || t.type === 'MAP') {
      throw this.mismatch(
        t === null ? 'BINARY_OP_DIFF_TYPES' : 'INVALID_ORDERING_TYPE',
        sql,
        t === null
          ? `the left and right operands of the binary operator have incompatible types ("${typeName(lt)}" and "${typeName(rt)}"); cast one of them`
          : `the comparison does not support ordering on type "${typeName(t)}"`,
        pos,
      );
    }
    if (t.type === 'NULL') t = BOOLEAN;
    return { l: implicitCast(l, t), r: implicitCast(r, t), type: t };
  }

  private caseWhen(ast: Extract<Ast, { k: 'case' }>): Typed {
    const operand = ast.operand === undefined ? undefined : this.analyze(ast.operand);
    const whens = ast.whens.map((w) => ({ when: this.analyze(w.when), result: this.analyze(w.result) }));
    const otherwise = ast.otherwise === undefined ? undefined : this.analyze(ast.otherwise);
    // Spark's parser turns CASE x WHEN v THEN ... into CaseWhen((x = v), ...): its SQL text has no operand
    const whenSql = (w: { when: Typed }) => (operand ? `(${operand.sql} = ${w.when.sql})` : w.when.sql);
    const sql = `CASE ${whens.map((w) => `WHEN ${whenSql(w)} THEN ${w.result.sql}`).join(' ')}${otherwise ? ` ELSE ${otherwise.sql}` : ''} END`;
    const conds = whens.map((w) => (operand ? this.binary('=', operand, w.when, ast.pos) : this.implicitBoolean(w.when, sql, ast.pos)));
    const values = [...whens.map((w) => w.result), ...(otherwise ? [otherwise] : [])];
    const t = commonType(values.map((v) => v.type));
    if (t === null) {
      throw this.mismatch(
        'DATA_DIFF_TYPES',
        sql,
        `the THEN and ELSE values should all be the same type, but they are [${values.map((v) => `"${typeName(v.type)}"`).join(', ')}]; cast them to one type`,
        ast.pos,
      );
    }
    const vs = values.map((v) => implicitCast(v, t));
    const n = conds.length;
    return {
      type: t,
      sql,
      name: sql,
      children: [...conds, ...vs],
      build: withJs(
        (evs) => {
          const cs = evs.slice(0, n);
          const ts = evs.slice(n, 2 * n);
          const other = evs[2 * n];
          return (row) => {
            for (let i = 0; i < n; i++) if (cs[i](row) === true) return ts[i](row);
            return other === undefined ? null : other(row);
          };
        },
        (args) =>
          `(${args
            .slice(0, n)
            .map((c, i) => `${c} === true ? ${args[n + i]} : `)
            .join('')}${args[2 * n] ?? 'null'})`,
      ),
    };
  }

  cast(arg: Typed, to: SqlType, safe: boolean, pos: number): Typed {
    const sql = `${safe ? 'TRY_CAST' : 'CAST'}(${arg.sql} AS ${typeName(to)})`;
    if (!canCast(arg.type, to)) {
      const refused = castRefusal(arg.type, to, safe);
      throw this.mismatch(refused.subclass, sql, refused.text, pos);
    }
    const f = castFunction(arg.type, to, safe);
    return { type: to, sql, name: sql, children: [arg], build: strict(f) };
  }

  /** Spark's WRONG_NUM_ARGS when a call has fewer or more arguments than [min, max]. */
  private checkArgCount(name: string, count: number, [min, max]: readonly [number, number], pos: number): void {
    if (count >= min && count <= max) return;
    const expected = min === max ? `${min}` : max === Number.POSITIVE_INFINITY ? `at least ${min}` : `[${min}, ${max}]`;
    throw this.fail(
      'WRONG_NUM_ARGS.WITHOUT_SUGGESTION',
      `The \`${name}\` requires ${expected} parameters but the actual number is ${count}: fix the call ${name}(...)`,
      pos,
    );
  }

  callCtx(name: string, pos: number, sql: string): CallCtx {
    return { name, pos, sql, az: this };
  }

  private call(ast: Extract<Ast, { k: 'call' }>): Typed {
    const name = ast.name;
    if (NON_DETERMINISTIC.has(name)) {
      throw this.fail(
        'INVALID_NON_DETERMINISTIC_EXPRESSIONS',
        // (Spark's own sentence of the class first, so a check for either wording finds it)
        `The operator expects a deterministic expression, but the actual expression is "${name}()": ${name}() is not deterministic (a non-deterministic function): a replay of a batch must compute the same rows, so sluice refuses it; use a column of the input (an event time, an id) instead`,
        ast.pos,
      );
    }
    if (ast.filter !== undefined && !AGGREGATES.has(name)) {
      throw this.fail(
        'INVALID_SQL_SYNTAX.FUNCTION_WITH_UNSUPPORTED_SYNTAX',
        `The function ${name} does not support FILTER: FILTER (WHERE ...) goes with an aggregate function, e.g. count(*) FILTER (WHERE amount > 0)`,
        ast.pos,
      );
    }
    if (ast.withinGroup !== undefined && !AGGREGATES.has(name)) {
      throw this.fail(
        'INVALID_SQL_SYNTAX.FUNCTION_WITH_UNSUPPORTED_SYNTAX',
        `The function ${name} does not support WITHIN GROUP: it goes with listagg and string_agg, e.g. listagg(name, ', ') WITHIN GROUP (ORDER BY name)`,
        ast.pos,
      );
    }
    if (ast.nulls?.ignore === true && !AGGREGATES.has(name)) {
      throw this.fail(
        'INVALID_SQL_SYNTAX.FUNCTION_WITH_UNSUPPORTED_SYNTAX',
        `The function ${name} does not support IGNORE NULLS: it goes with first, last and any_value, e.g. first(x) IGNORE NULLS`,
        ast.pos,
      );
    }
    if (AGGREGATES.has(name)) {
      throw this.fail(
        'UNSUPPORTED_EXPR_FOR_OPERATOR',
        `${name}(...) is an aggregate function, which is not allowed in a row expression: aggregate with groupBy(...).agg(...) (an aggregation's "fn": "${name}")`,
        ast.pos,
      );
    }
    // (a function that analyzes its own arguments: a lambda needs the collection's types, a unit is a bare word)
    const own = HIGHER_ORDER_FUNCTIONS[name] ?? unitFunction(name, ast.args.length);
    if (own !== undefined) {
      this.checkArgCount(name, ast.args.length, own.args, ast.pos);
      return own.resolve(this, ast);
    }
    if (ast.args.some((a) => a.k === 'lambda')) {
      throw this.fail(
        'INVALID_LAMBDA_FUNCTION_CALL.NON_HIGHER_ORDER_FUNCTION',
        `A lambda function should only be used in a higher order function, and ${name} is not one: pass a value, or use ${higherOrderNames()}`,
        ast.pos,
      );
    }
    const def = FUNCTIONS[name];
    if (def === undefined && (name === 'grouping' || name === 'grouping_id')) {
      throw this.fail(
        'UNSUPPORTED_GROUPING_EXPRESSION',
        `grouping()/grouping_id() can only be used with GroupingSets/Cube/Rollup: call ${name}() in the select list or HAVING of a GROUP BY with ROLLUP, CUBE or GROUPING SETS`,
        ast.pos,
      );
    }
    if (def === undefined) {
      const near = suggest(name, Object.keys(FUNCTIONS));
      throw this.fail(
        'UNRESOLVED_ROUTINE',
        `Cannot resolve routine \`${name}\` on search path [\`system\`.\`builtin\`]: it is not one of the functions sluice supports${near.length ? ` (did you mean ${near.join(', ')}?)` : ''}; see docs/expressions.md`,
        ast.pos,
      );
    }
    if (ast.star && name !== 'count' && !this.scope.stars)
      throw this.fail('INVALID_USAGE_OF_STAR_OR_REGEX', `Invalid usage of '*' in ${name}(*): pass the columns`, ast.pos);
    // struct(x AS z): the field is named z, and the call's text keeps the alias; a `*` expands to the columns
    const args: Typed[] = [];
    const names: (string | undefined)[] = [];
    const given = ast.star && name !== 'count' ? [{ k: 'star', pos: ast.pos, qualifier: [] } as Ast] : ast.args;
    given.forEach((a, i) => {
      if (a.k === 'star' && this.scope.stars) {
        for (const e of this.expandStar(a)) {
          args.push(e.typed);
          names.push(undefined);
        }
        return;
      }
      const alias = ast.argNames?.[i];
      args.push(alias === undefined ? this.analyze(a) : { ...this.analyze(a), fieldName: alias });
      names.push(alias);
    });
    this.checkArgCount(name, args.length, def.args, ast.pos);
    const texts = args.map((a, i) => (names[i] === undefined ? a.sql : `${a.sql} AS ${names[i]}`));
    const quote = (v: string) => (this.scope.pretty ? v : `'${v}'`);
    const sql = callSql(name, texts, quote);
    return def.resolve(args, this.callCtx(name, ast.pos, sql));
  }
}

/** The higher-order functions' names, for the messages about a lambda out of place (read when needed: lambdas.ts imports this module). */
function higherOrderNames(): string {
  return Object.keys(HIGHER_ORDER_FUNCTIONS).join(', ');
}

/** What a function's resolver gets beside its typed arguments. */
export interface CallCtx {
  readonly name: string;
  readonly pos: number;
  /** Spark's text of the call: `lower(country)`. */
  readonly sql: string;
  readonly az: Analyzer;
}

/**
 * A function that analyzes its own arguments from their syntax (lambdas.ts, timestamp-units.ts):
 * a lambda is typed from the collection before it, a unit is a bare word. The analyzer checks the
 * count of arguments first.
 */
export interface AstFunction {
  readonly args: readonly [number, number];
  readonly resolve: (az: Analyzer, call: Extract<Ast, { k: 'call' }>) => Typed;
}

/** A function's definition: how many arguments it takes and how it types and builds a call. */
export interface FunctionDef {
  readonly args: readonly [number, number];
  readonly resolve: (args: readonly Typed[], c: CallCtx) => Typed;
}

/** A literal in Spark's pretty form (usePrettyExpression): a number or string as its value's text (Java's toString), others as their SQL. */
function prettyLiteral(value: unknown, type: SqlType, sql: string): string {
  if (value === null || value === undefined) return sql;
  switch (type.type) {
    case 'STRING':
      return value as string;
    case 'INT':
    case 'LONG':
      return String(value);
    case 'DOUBLE':
      return javaDoubleText(value as number, type.binary32);
    case 'DECIMAL':
      return javaDecimalText(value as string);
    default:
      return sql;
  }
}

/** A literal's node: its value for every row. */
export function literal(value: unknown, type: SqlType, sql: string): Typed {
  const name = type.type === 'STRING' && typeof value === 'string' ? value : sql;
  return { type, sql, name, children: [], constant: { value }, build: constantBuilder(value) };
}

function columnRef(c: ColumnInfo): Typed {
  const key = c.name;
  const sql = /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? key : `\`${key.replace(/`/g, '``')}\``;
  return { type: c.window ? WINDOW_TYPE : c, sql, name: key, children: [], build: columnBuilder(key) };
}

/** `arg` cast to `to` (Spark's implicit ANSI cast), keeping its SQL text and name. */
export function implicitCast(arg: Typed, to: SqlType): Typed {
  if (sameType(arg.type, to)) return arg;
  if (arg.type.type === 'NULL') return { ...arg, type: to };
  const f = castFunction(arg.type, to, false);
  if (arg.constant) {
    const v = arg.constant.value;
    // a literal is cast once; a literal that does not cast fails per row, as Spark's would at run time
    try {
      const c = v == null ? null : f(v);
      return { ...arg, type: to, constant: { value: c }, build: constantBuilder(c) };
    } catch {
      // fall through: the error surfaces per row
    }
  }
  return { type: to, sql: arg.sql, name: arg.name, children: [arg], build: strict(f) };
}

/** Up to five names closest to `name` (Levenshtein distance), as Spark's suggestions. */
export function suggest(name: string, names: readonly string[]): string[] {
  const n = name.toLowerCase();
  return [...names]
    .map((x) => ({ x, d: distance(n, x.toLowerCase()) }))
    .sort((a, b) => a.d - b.d || a.x.localeCompare(b.x))
    .slice(0, 5)
    .map((e) => e.x);
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length];
}
