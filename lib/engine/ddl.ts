/**
 * Spark DDL for schemas and types: `user STRING, price DECIMAL(10,2), lines
 * ARRAY<STRUCT<sku: STRING, qty: INT>>`. A small recursive-descent parser over a token list,
 * written here rather than taken from a library because no parser on npm reads Spark's DDL, and
 * its errors must name the column, the rule and the fix.
 *
 *   schema  := field (',' field)*
 *   field   := name [':'] type ['NOT' 'NULL'] ['COMMENT' 'text']
 *   name    := identifier | `any text` (`` ` `` written twice inside)
 *   type    := primitive | DECIMAL ['(' p [',' s] ')'] | ARRAY '<' type '>'
 *            | MAP '<' type ',' type '>' | STRUCT '<' [field (',' field)*] '>'
 */
import { InvalidOptionError } from './errors';
import type { Column, DataType } from './schema';

/** The primitive type names and their aliases, as Spark's DDL parser takes them (case-insensitive). */
const PRIMITIVES: Record<string, DataType> = {
  STRING: { type: 'STRING' },
  VARCHAR: { type: 'STRING' },
  CHAR: { type: 'STRING' },
  TEXT: { type: 'STRING' },
  BOOLEAN: { type: 'BOOLEAN' },
  BOOL: { type: 'BOOLEAN' },
  TINYINT: { type: 'INT', bits: 8 },
  BYTE: { type: 'INT', bits: 8 },
  SMALLINT: { type: 'INT', bits: 16 },
  SHORT: { type: 'INT', bits: 16 },
  INT: { type: 'INT' },
  INTEGER: { type: 'INT' },
  BIGINT: { type: 'LONG' },
  LONG: { type: 'LONG' },
  FLOAT: { type: 'DOUBLE', binary32: true },
  REAL: { type: 'DOUBLE', binary32: true },
  DOUBLE: { type: 'DOUBLE' },
  DATE: { type: 'DATE' },
  TIMESTAMP: { type: 'TIMESTAMP' },
  TIMESTAMP_LTZ: { type: 'TIMESTAMP' },
};

/** DECIMAL's spellings; without a precision it is DECIMAL(10,0), as in Spark. */
const DECIMALS = new Set(['DECIMAL', 'DEC', 'NUMERIC']);

/** The largest precision of a DECIMAL (Spark's DecimalType.MAX_PRECISION). */
export const MAX_DECIMAL_PRECISION = 38;

const SUPPORTED =
  'STRING, BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL(p,s), DATE, TIMESTAMP, ARRAY<T>, MAP<STRING,T>, STRUCT<name: T, ...>';

interface Token {
  /** 'id' a bare word, 'quoted' a backticked name, 'num' digits, 'str' a quoted comment, or the punctuation itself. */
  readonly kind: 'id' | 'quoted' | 'num' | 'str' | '<' | '>' | '(' | ')' | ',' | ':';
  readonly text: string;
  readonly at: number;
}

function tokenize(ddl: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < ddl.length) {
    const c = ddl[i];
    if (/\s/.test(c)) {
      i++;
    } else if ('<>(),:'.includes(c)) {
      out.push({ kind: c as Token['kind'], text: c, at: i });
      i++;
    } else if (c === '`') {
      let text = '';
      let j = i + 1;
      for (;;) {
        if (j >= ddl.length) throw bad(ddl, i, 'a backticked name is not closed: end it with `');
        if (ddl[j] === '`') {
          if (ddl[j + 1] === '`') {
            text += '`';
            j += 2;
            continue;
          }
          break;
        }
        text += ddl[j++];
      }
      out.push({ kind: 'quoted', text, at: i });
      i = j + 1;
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < ddl.length && ddl[j] !== c) j += ddl[j] === '\\' ? 2 : 1;
      if (j >= ddl.length) throw bad(ddl, i, `a comment's text is not closed: end it with ${c}`);
      out.push({ kind: 'str', text: ddl.slice(i + 1, j), at: i });
      i = j + 1;
    } else {
      const m = /^[A-Za-z0-9_]+/.exec(ddl.slice(i));
      if (!m) throw bad(ddl, i, `the character ${JSON.stringify(c)} cannot start a name or a type: write odd names in backticks`);
      out.push({ kind: /^[0-9]+$/.test(m[0]) ? 'num' : 'id', text: m[0], at: i });
      i += m[0].length;
    }
  }
  return out;
}

function bad(ddl: string, at: number, rule: string): InvalidOptionError {
  return new InvalidOptionError(`schema "${ddl}" at position ${at + 1}: ${rule}`);
}

class Parser {
  private i = 0;
  constructor(
    private readonly ddl: string,
    private readonly tokens: readonly Token[],
    /** A MAP may have keys of another type than STRING (an expression's type); a schema's may not. */
    private readonly typedKeys = false,
  ) {}

  private peek(): Token | undefined {
    return this.tokens[this.i];
  }

  private fail(rule: string): never {
    const t = this.peek();
    throw bad(this.ddl, t ? t.at : this.ddl.length, t ? `found ${JSON.stringify(t.text)}; ${rule}` : `the text ends early; ${rule}`);
  }

  private expect(kind: Token['kind'], rule: string): Token {
    const t = this.peek();
    if (t?.kind !== kind) this.fail(rule);
    this.i++;
    return t;
  }

  private word(w: string): boolean {
    const t = this.peek();
    if (t?.kind === 'id' && t.text.toUpperCase() === w) {
      this.i++;
      return true;
    }
    return false;
  }

  done(): boolean {
    return this.i >= this.tokens.length;
  }

  /** field (',' field)* up to `end` (the end of the text, or a struct's '>'). */
  fields(end: '>' | null): Column[] {
    const out: Column[] = [];
    const seen = new Set<string>();
    if (end !== null && this.peek()?.kind === end) return out; // STRUCT<>
    for (;;) {
      const at = this.peek()?.at ?? this.ddl.length;
      const f = this.field();
      if (seen.has(f.name)) throw bad(this.ddl, at, `${end === null ? 'column' : 'struct field'} ${f.name} is declared twice: give each one declaration`);
      seen.add(f.name);
      out.push(f);
      const t = this.peek();
      if (t?.kind === ',') {
        this.i++;
        continue;
      }
      if (end === null ? t === undefined : t?.kind === end) return out;
      this.fail(end === null ? 'expected "," before the next column' : 'expected "," or ">" after a struct field');
    }
  }

  private field(): Column {
    const t = this.peek();
    if (t === undefined || (t.kind !== 'id' && t.kind !== 'quoted')) this.fail('expected a name (write names with other characters in backticks)');
    this.i++;
    const name = t.text;
    if (name === '__proto__') {
      throw bad(this.ddl, t.at, 'a column named __proto__ cannot be held as data by JavaScript objects: rename the field at the producer');
    }
    if (this.peek()?.kind === ':') this.i++;
    const type = this.type(name);
    if (this.word('NOT')) {
      if (!this.word('NULL')) this.fail('expected NULL after NOT');
    }
    if (this.word('COMMENT')) this.expect('str', "expected the comment's text in quotes");
    return { name, ...type };
  }

  type(name: string): DataType {
    const t = this.peek();
    if (t?.kind !== 'id') this.fail(`expected the type of ${name}, one of ${SUPPORTED}`);
    this.i++;
    const upper = t.text.toUpperCase();
    const primitive = PRIMITIVES[upper];
    if (primitive !== undefined) {
      // VARCHAR(n) and CHAR(n): Spark reads them as STRING
      if ((upper === 'VARCHAR' || upper === 'CHAR') && this.peek()?.kind === '(') {
        this.i++;
        this.expect('num', 'expected a length');
        this.expect(')', 'expected ")"');
      }
      return primitive;
    }
    if (DECIMALS.has(upper)) return this.decimal(name);
    if (upper === 'ARRAY') {
      this.expect('<', 'expected "<" after ARRAY');
      const element = this.type(`${name}'s elements`);
      this.expect('>', 'expected ">" to close ARRAY<');
      return { type: 'ARRAY', element };
    }
    if (upper === 'MAP') {
      this.expect('<', 'expected "<" after MAP');
      const key = this.type(`${name}'s keys`);
      if (key.type !== 'STRING' && !this.typedKeys) {
        throw bad(this.ddl, t.at, `${name} is a MAP with ${ddlOf(key)} keys; JSON object keys are strings: declare MAP<STRING, ...>`);
      }
      this.expect(',', 'expected "," between the key and value types of MAP');
      const value = this.type(`${name}'s values`);
      this.expect('>', 'expected ">" to close MAP<');
      return key.type === 'STRING' ? { type: 'MAP', value } : { type: 'MAP', key, value };
    }
    if (upper === 'STRUCT') {
      this.expect('<', 'expected "<" after STRUCT');
      const fields = this.fields('>');
      this.expect('>', 'expected ">" to close STRUCT<');
      return { type: 'STRUCT', fields };
    }
    throw bad(this.ddl, t.at, `${name} has type ${t.text}, which sluice does not support: use one of ${SUPPORTED}`);
  }

  private decimal(name: string): DataType {
    let precision = 10;
    let scale = 0;
    if (this.peek()?.kind === '(') {
      this.i++;
      precision = Number(this.expect('num', 'expected the precision of DECIMAL').text);
      if (this.peek()?.kind === ',') {
        this.i++;
        scale = Number(this.expect('num', 'expected the scale of DECIMAL').text);
      }
      this.expect(')', 'expected ")" to close DECIMAL(');
    }
    if (precision < 1 || precision > MAX_DECIMAL_PRECISION || scale > precision) {
      throw bad(
        this.ddl,
        0,
        `${name} is DECIMAL(${precision},${scale}): the precision must be 1 to ${MAX_DECIMAL_PRECISION} and the scale at most the precision (Spark's DecimalType)`,
      );
    }
    return { type: 'DECIMAL', precision, scale };
  }
}

/** The columns a DDL schema declares, top level in order. */
export function parseDdlColumns(ddl: string, typedKeys = false): Column[] {
  const p = new Parser(ddl, tokenize(ddl), typedKeys);
  const cols = p.fields(null);
  if (!p.done()) throw bad(ddl, 0, 'text after the last column');
  return cols;
}

/** One type in DDL (`DECIMAL(10,2)`, `ARRAY<STRING>`), as from_json's and CAST's type arguments take it. */
export function parseDdlType(text: string, typedKeys = false): DataType {
  const p = new Parser(text, tokenize(text), typedKeys);
  const t = p.type('the type');
  if (!p.done()) throw bad(text, 0, 'text after the type');
  return t;
}

/** A column name as DDL writes it: bare when it is a plain identifier, else in backticks. */
export function ddlName(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `\`${name.replace(/`/g, '``')}\``;
}

/** A type in Spark's DDL (the names Spark's `simpleString` upper-cased: DECIMAL(10,2), ARRAY<STRUCT<a: INT>>). */
export function ddlOf(t: DataType): string {
  switch (t.type) {
    case 'INT':
      return t.bits === 8 ? 'TINYINT' : t.bits === 16 ? 'SMALLINT' : 'INT';
    case 'LONG':
      return 'BIGINT';
    case 'DOUBLE':
      return t.binary32 ? 'FLOAT' : 'DOUBLE';
    case 'DECIMAL':
      return `DECIMAL(${t.precision},${t.scale})`;
    case 'ARRAY':
      return `ARRAY<${ddlOf(t.element!)}>`;
    case 'MAP':
      return `MAP<${t.key === undefined ? 'STRING' : ddlOf(t.key)}, ${ddlOf(t.value!)}>`;
    case 'STRUCT':
      return `STRUCT<${t.fields!.map((f) => `${ddlName(f.name)}: ${ddlOf(f)}`).join(', ')}>`;
    default:
      return t.type;
  }
}

/** A type in Hive's DDL, as a Glue table's columns take it (`decimal(10,2)`, `array<struct<a:int>>`): the text of Spark's simpleString too (a frame's dtypes). */
export function hiveTypeOf(t: DataType): string {
  switch (t.type) {
    case 'STRING':
      return 'string';
    case 'BOOLEAN':
      return 'boolean';
    case 'INT':
      return t.bits === 8 ? 'tinyint' : t.bits === 16 ? 'smallint' : 'int';
    case 'LONG':
      return 'bigint';
    case 'DOUBLE':
      return t.binary32 ? 'float' : 'double';
    case 'DECIMAL':
      return `decimal(${t.precision},${t.scale})`;
    case 'DATE':
      return 'date';
    case 'TIMESTAMP':
      return 'timestamp';
    case 'ARRAY':
      return `array<${hiveTypeOf(t.element!)}>`;
    case 'MAP':
      return `map<${t.key === undefined ? 'string' : hiveTypeOf(t.key)},${hiveTypeOf(t.value!)}>`;
    case 'STRUCT':
      return `struct<${t.fields!.map((f) => `${f.name}:${hiveTypeOf(f)}`).join(',')}>`;
  }
}

/** Whether values of `t` need the number's text to be read exactly (a DECIMAL, or a BIGINT inside a nested type). */
export function needsNumberText(t: DataType, nested = false): boolean {
  switch (t.type) {
    case 'DECIMAL':
      return true;
    case 'LONG':
      return nested;
    case 'ARRAY':
      return needsNumberText(t.element!, true);
    case 'MAP':
      return needsNumberText(t.value!, true);
    case 'STRUCT':
      return t.fields!.some((f) => needsNumberText(f, true));
    default:
      return false;
  }
}
