/**
 * Spark's number-format functions (numberFormatExpressions.scala over util/ToNumberParser.scala):
 * `to_number(expr, fmt)` and `try_to_number(expr, fmt)` read a STRING into the DECIMAL its format
 * describes, and `to_char(expr, fmt)` / `to_varchar` write a number as the format lays it out.
 *
 * This module follows Spark 4's ToNumberParser to the letter: the format (upper-cased, so
 * case-insensitive) is made of `0`/`9` digit runs, `.`/`D`, `,`/`G`, `$`, `S`, `MI` and `PR`;
 * it must be a constant, and is checked when the query is built with Spark's INVALID_FORMAT.*
 * sub-classes in Spark's order. to_number's type is DECIMAL(all the format's digits, the digits
 * after its point) (DECIMAL(10,0) for a NULL format); an input that does not match is
 * INVALID_FORMAT.MISMATCH_INPUT (try_to_number: NULL), an input without a digit too (Spark 4.1,
 * SPARK-54843). to_char takes a DECIMAL, an integral or floating value cast to Spark's DECIMAL for
 * its type, or a STRING cast to DECIMAL(38,18); its digits past the format's are `#`s. A DATE or
 * TIMESTAMP first argument is date_format, as Spark's ToCharacterBuilder makes it. Spark's BINARY
 * formats (`base64`, `hex`, `utf-8`) need a BINARY value, which sluice has not: such a format is
 * refused, with the way to get that text from a string. A DECIMAL stays exact: its canonical text.
 */
import { formatDecimal } from '../decimal';
import { type CallCtx, type FunctionDef, implicitCast } from './analyze';
import { DATETIME_CONVERSIONS } from './datetime-conversions';
import { SparkRowError } from './errors';
import { call, def, str, what } from './fn-util';
import { compileTyped, strict, type Typed } from './typed';
import { asDecimal, decimal, MAX_PRECISION, STRING, typeName } from './types';

/** A run of `0`/`9` digits: `exact` (a run that starts with 0 before the point) must be matched by as many digits. */
interface Run {
  readonly n: number;
  readonly exact: boolean;
}

/** A format token; a group is digit runs and separators (null) left to right. */
type Token =
  | { readonly k: 'group'; readonly items: readonly (Run | null)[]; readonly runs: readonly Run[] }
  | { readonly k: 'point' | 'sep' | 'dollar' | 'S' | 'MI' | 'open' | 'close' }
  | { readonly k: 'bad'; readonly ch: string };

interface NumberFormat {
  /** The format, upper-cased. */
  readonly text: string;
  readonly tokens: readonly Token[];
  /** All the format's digits, and those after its point. */
  readonly precision: number;
  readonly scale: number;
}

/** ToNumberParser's formatTokens: the tokens of an upper-cased format, runs and separators grouped. */
function tokenize(f: string): Token[] {
  const raw: (Token | Run)[] = [];
  let point = false;
  let i = 0;
  while (i < f.length) {
    const ch = f[i];
    if (ch === '0' || ch === '9') {
      let j = i + 1;
      while (j < f.length && (f[j] === '0' || f[j] === '9')) j++;
      raw.push({ n: j - i, exact: ch === '0' && !point });
      i = j;
      continue;
    }
    i++;
    if (ch === '.' || ch === 'D') {
      raw.push({ k: 'point' });
      point = true;
    } else if (ch === ',' || ch === 'G') raw.push({ k: 'sep' });
    else if (ch === '$') raw.push({ k: 'dollar' });
    else if (ch === 'S') raw.push({ k: 'S' });
    else if (ch === 'M' && f[i] === 'I') {
      raw.push({ k: 'MI' });
      i++;
    } else if (ch === 'P' && f[i] === 'R') {
      // PR wraps the whole number: its `<` goes first
      raw.unshift({ k: 'open' });
      raw.push({ k: 'close' });
      i++;
    } else raw.push({ k: 'bad', ch });
  }
  const out: Token[] = [];
  let items: (Run | null)[] = [];
  const flush = () => {
    if (items.length > 0) out.push({ k: 'group', items, runs: items.filter((x): x is Run => x !== null) });
    items = [];
  };
  for (const t of raw) {
    if ('n' in t) items.push(t);
    else if (t.k === 'sep') items.push(null);
    else {
      flush();
      out.push(t);
    }
  }
  flush();
  return out;
}

/** A token as Spark's messages name it (InputToken.toString; Spark's own text has the stray quote). */
function tokenName(t: Token): string {
  switch (t.k) {
    case 'group':
      return 'digit sequence';
    case 'point':
      return '. or D';
    case 'dollar':
      return '$';
    case 'S':
    case 'MI':
      return t.k;
    case 'bad':
      return `character '${t.ch}''`;
    default:
      return 'PR';
  }
}

/** Spark's allowed order: [PR's <] [MI|S] [$] [digits] [.|D] [digits] [$] [PR|MI|S]. */
const ORDER: readonly (readonly Token['k'][])[] = [['open'], ['MI', 'S'], ['dollar'], ['group'], ['point'], ['group'], ['dollar'], ['MI', 'S', 'close']];

/** ToNumberParser.checkInputDataTypes: the INVALID_FORMAT sub-class and its message, or null for a valid format. */
function formatError(text: string, tokens: readonly Token[]): [string, string] | null {
  if (text === '') return ['EMPTY', 'The number format string cannot be empty.'];
  const at = (k: Token['k']) => tokens.findIndex((t) => t.k === k);
  const firstDigit = at('group');
  if (firstDigit < 0) return ['WRONG_NUM_DIGIT', 'The format string requires at least one number digit.'];
  const dollar = at('dollar');
  const point = at('point');
  if (firstDigit < dollar) return ['CUR_MUST_BEFORE_DIGIT', 'Currency characters must appear before digits in the number format.'];
  if (point !== -1 && point < dollar) return ['CUR_MUST_BEFORE_DEC', 'Currency characters must appear before any decimal point in the number format.'];
  const groups = tokens.map((t, i) => ({ t, i })).filter((g) => g.t.k === 'group');
  const itemsOf = (t: Token) => (t.k === 'group' ? t.items : []);
  const badSeps = (items: readonly (Run | null)[]) =>
    items.some((x, j) => x === null && (j === 0 || j === items.length - 1 || items[j - 1] === null || items[j + 1] === null));
  if (groups.some((g) => (point === -1 || g.i < point) && badSeps(itemsOf(g.t)))) {
    return ['CONT_THOUSANDS_SEPS', 'Thousands separators (, or G) must have digits in between them in the number format.'];
  }
  if (groups.some((g) => point !== -1 && g.i > point && itemsOf(g.t).includes(null))) {
    return ['THOUSANDS_SEPS_MUST_BEFORE_DEC', 'Thousands separators (, or G) may not appear after the decimal point in the number format.'];
  }
  for (const k of ['point', 'S', 'MI', 'dollar', 'close'] as const) {
    if (tokens.filter((t) => t.k === k).length > 1) {
      return ['WRONG_NUM_TOKEN', `At most one ${tokenName({ k } as Token)} is allowed in the number format.`];
    }
  }
  let i = 0;
  for (const allowed of ORDER) if (i < tokens.length && allowed.includes(tokens[i].k)) i++;
  if (i < tokens.length) {
    return [
      'UNEXPECTED_TOKEN',
      `Found the unexpected ${tokenName(tokens[i])} in the format string; the structure of the format string must match: \`[MI|S]\` \`[$]\` \`[0|9|G|,]*\` \`[.|D]\` \`[0|9]*\` \`[$]\` \`[PR|MI|S]\`.`,
    ];
  }
  return null;
}

/** A string as Spark's toSQLValue quotes it. */
const sqlString = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

const BINARY_FORMATS = new Set(['base64', 'hex', 'utf-8']);

/** A constant (or foldable) format argument as a checked NumberFormat; null for a NULL format. */
function formatArg(c: CallCtx, f: Typed): NumberFormat | null {
  const foldable = (t: Typed): boolean => t.constant !== undefined || (t.children.length > 0 && t.children.every(foldable));
  const fs = str(c, f, 1);
  if (!foldable(fs)) {
    throw c.az.mismatch('NON_FOLDABLE_INPUT', c.sql, `the input \`${f.name}\` should be a foldable "STRING" expression; however, got "${f.sql}"`, c.pos);
  }
  const v = (fs.constant !== undefined ? fs.constant.value : compileTyped(fs)({})) as string | null;
  if (v === null) return null;
  const text = v.toUpperCase();
  const tokens = tokenize(text);
  const bad = formatError(text, tokens);
  if (bad !== null) {
    const binary =
      c.name !== 'to_number' && c.name !== 'try_to_number' && BINARY_FORMATS.has(v.trim().toLowerCase())
        ? ` (Spark's to_char takes '${v.trim().toLowerCase()}' for a BINARY value, and sluice has no BINARY type: for a string's bytes use base64(s), hex(s) or the string itself)`
        : '';
    throw c.az.fail(`INVALID_FORMAT.${bad[0]}`, `The format is invalid: ${sqlString(text)}. ${bad[1]}${binary}`, c.pos);
  }
  const digits = (ts: readonly Token[]) => ts.reduce((sum, t) => sum + (t.k === 'group' ? t.runs.reduce((s, r) => s + r.n, 0) : 0), 0);
  const point = tokens.findIndex((t) => t.k === 'point');
  return { text, tokens, precision: digits(tokens), scale: point < 0 ? 0 : digits(tokens.slice(point)) };
}

/** Java's Character.isWhitespace of one UTF-16 unit (space separators but the no-break ones, and \t-\r, \u001C-\u001F). */
function isJavaSpace(code: number): boolean {
  if ((code >= 9 && code <= 13) || (code >= 0x1c && code <= 0x20)) return true;
  return (code >= 0x2000 && code <= 0x200a && code !== 0x2007) || [0x1680, 0x2028, 0x2029, 0x205f, 0x3000].includes(code);
}

const UNICODE_DIGIT = /\p{Nd}/u;

/** Java's Character.digit(ch, 10) of a Character.isDigit UTF-16 unit (any Unicode decimal digit), or -1. */
function digitOf(ch: string): number {
  const code = ch.charCodeAt(0);
  if (code >= 48 && code <= 57) return code - 48;
  if (code < 128 || !UNICODE_DIGIT.test(ch)) return -1;
  // decimal digits come in runs of ten, from their zero
  let start = code;
  while (UNICODE_DIGIT.test(String.fromCharCode(start - 1))) start--;
  return (code - start) % 10;
}

/** ToNumberParser.parse: the canonical DECIMAL text of `s` read by the format, or null when it does not match. */
function parseNumber(f: NumberFormat, s: string): string | null {
  let before = '';
  let after = '';
  let point = false;
  let opened = false;
  let closed = false;
  let negative = false;
  let i = 0;
  for (const t of f.tokens) {
    const ch = i < s.length ? s[i] : undefined;
    switch (t.k) {
      case 'group': {
        // the digits (whitespace skipped) and commas here, each group's size from the right
        const sizes: number[] = [];
        let count = 0;
        for (; i < s.length; i++) {
          const d = digitOf(s[i]);
          if (d >= 0) {
            count++;
            if (point) after += d;
            else before += d;
          } else if (s[i] === ',') {
            sizes.unshift(count);
            count = 0;
          } else if (!isJavaSpace(s.charCodeAt(i))) break;
        }
        sizes.unshift(count);
        if (sizes.length > t.runs.length) return null;
        for (let k = 0; k < t.runs.length; k++) {
          const run = t.runs[t.runs.length - 1 - k];
          const n = sizes[k] ?? 0;
          if (run.exact ? n !== run.n : n > run.n) return null;
        }
        break;
      }
      case 'point':
        if (ch === '.') {
          point = true;
          i++;
        }
        break;
      case 'dollar':
        if (ch !== undefined) {
          if (ch !== '$') return null;
          i++;
        }
        break;
      case 'S':
      case 'MI':
        if (ch === '-' || (ch === '+' && t.k === 'S')) {
          negative = ch === '-' ? !negative : negative;
          i++;
        }
        break;
      case 'open':
        if (ch === '<') {
          if (opened) return null;
          opened = true;
          i++;
        }
        break;
      case 'close':
        if (ch === '>') {
          if (!opened) return null;
          closed = true;
          negative = !negative;
          i++;
        }
        break;
    }
  }
  if (i < s.length || opened !== closed || (before === '' && after === '')) return null;
  const unscaled = BigInt(`${before}${after.padEnd(f.scale, '0')}`);
  return formatDecimal(negative ? -unscaled : unscaled, f.scale);
}

/** Appends `ch`, moved left past the spaces before it (addCharacterCheckingTrailingSpaces). */
function addChar(out: string[], ch: string): void {
  out.push(ch);
  for (let i = out.length - 1; i >= 1 && out[i - 1] === ' ' && out[i] === ch; i--) [out[i - 1], out[i]] = [ch, ' '];
}

/** Appends a space, moved left past a sign or `<` before it (addSpaceCheckingTrailingCharacters). */
function addSpace(out: string[]): void {
  out.push(' ');
  for (let i = out.length - 1; i >= 1 && '+-<'.includes(out[i - 1]) && out[i] === ' '; i--) [out[i - 1], out[i]] = [' ', out[i - 1]];
}

/** A point that ends the text or is followed by a space becomes a space (stripTrailingLoneDecimalPoint). */
function stripLonePoint(out: string[]): void {
  const i = out.indexOf('.');
  if (i !== -1 && (i === out.length - 1 || out[i + 1] === ' ')) out[i] = ' ';
}

/** ToNumberParser.format: a DECIMAL's canonical text laid out by the format. */
function formatNumber(f: NumberFormat, value: string): string {
  const negative = value.startsWith('-');
  const [ip, fp = ''] = value.split('.');
  const intDigits = f.precision - f.scale;
  let before = ip.replace(/^[-0]+/, '');
  let after = fp.replace(/0+$/, '');
  if (intDigits < before.length || f.scale < after.length) {
    // more digits than the format has: an overflow, every digit a #
    before = '#'.repeat(intDigits);
    after = '#'.repeat(f.scale);
  }
  before = before.padStart(intDigits, ' ');
  after = after.padEnd(f.scale, '0');
  const out: string[] = [];
  let b = 0;
  let a = 0;
  let point = false;
  for (const t of f.tokens) {
    switch (t.k) {
      case 'group':
        for (const run of t.items) {
          if (run === null) {
            if (out.length > 0 && /[0-9]/.test(out[out.length - 1])) out.push(',');
            else addSpace(out);
          } else if (point) {
            for (let k = 0; k < run.n; k++) out.push(after[a++]);
          } else {
            for (let k = 0; k < run.n; k++) {
              const ch = before[b++];
              if (ch !== ' ') out.push(ch);
              else if (run.exact) out.push('0');
              else addSpace(out);
            }
          }
        }
        break;
      case 'point':
        if (out[out.length - 1] === ' ') out[out.length - 1] = '0';
        out.push('.');
        point = true;
        break;
      case 'dollar':
        out.push('$');
        break;
      case 'S':
        stripLonePoint(out);
        addChar(out, negative ? '-' : '+');
        break;
      case 'MI':
        if (negative) {
          stripLonePoint(out);
          addChar(out, '-');
        } else out.push(' ');
        break;
      case 'open':
        if (negative) out.push('<');
        break;
      case 'close':
        stripLonePoint(out);
        if (negative) addChar(out, '>');
        else out.push(' ', ' ');
        break;
    }
  }
  stripLonePoint(out);
  const text = out.join('');
  return text === '' || text === '+' || text === '-' ? '0' : text;
}

/** to_number / try_to_number: the first argument as a STRING, read by the format into its DECIMAL. */
function toNumber(orNull: boolean): FunctionDef {
  return def(2, 2, ([x, f], c) => {
    const s = str(c, x, 0);
    const fmt = formatArg(c, f);
    if (fmt !== null && fmt.precision > MAX_PRECISION) {
      throw c.az.fail(
        'DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION',
        `Decimal precision ${fmt.precision} exceeds max precision ${MAX_PRECISION}. (to_number's result has a digit for each 0 or 9 of its format: use at most ${MAX_PRECISION})`,
        c.pos,
      );
    }
    // a NULL format: Spark's DecimalType.USER_DEFAULT, and NULL
    const type = fmt === null ? decimal(10, 0) : decimal(fmt.precision, fmt.scale);
    return call(
      c,
      type,
      [s],
      strict((v) => {
        if (fmt === null) return null;
        const d = parseNumber(fmt, v as string);
        if (d !== null || orNull) return d;
        throw new SparkRowError(
          'INVALID_FORMAT.MISMATCH_INPUT',
          `The format is invalid: ${fmt.text}. The input "STRING" ${v} does not match the format. (Use try_to_number to get NULL instead.)`,
        );
      }),
    );
  });
}

/** The number to_char formats: a DECIMAL, or the value as Spark casts it to a DECIMAL input (DecimalType.forType; a STRING DECIMAL(38,18)). */
function decimalInput(c: CallCtx, x: Typed): Typed {
  const t = x.type;
  if (t.type === 'DECIMAL') return x;
  if (t.type === 'INT' || t.type === 'LONG') return implicitCast(x, asDecimal(t));
  if (t.type === 'DOUBLE') return implicitCast(x, t.binary32 ? decimal(14, 7) : decimal(30, 15));
  if (t.type === 'STRING' || t.type === 'NULL') return implicitCast(x, decimal(38, 18));
  throw c.az.mismatch('UNEXPECTED_INPUT_TYPE', c.sql, `${what(c, 0)} requires the "DECIMAL" type, however ${x.sql} has the type "${typeName(t)}"`, c.pos);
}

/** to_char / to_varchar: Spark's ToCharacterBuilder (date_format for a DATE or TIMESTAMP, else ToCharacter, named to_char). */
const toChar = def(2, 2, ([x, f], c) => {
  if (x.type.type === 'DATE' || x.type.type === 'TIMESTAMP') {
    return DATETIME_CONVERSIONS.date_format.resolve([x, f], { ...c, name: 'date_format', sql: `date_format(${x.sql}, ${f.sql})` });
  }
  const cc = { ...c, sql: `to_char${c.sql.slice(c.name.length)}` };
  const n = decimalInput(cc, x);
  const fmt = formatArg(cc, f);
  return call(
    cc,
    STRING,
    [n],
    strict((v) => (fmt === null ? null : formatNumber(fmt, v as string))),
  );
});

export const NUMBER_FORMAT_FUNCTIONS: Record<string, FunctionDef> = {
  to_number: toNumber(false),
  try_to_number: toNumber(true),
  to_char: toChar,
  to_varchar: toChar,
};
