/**
 * Tokens of Spark SQL expressions (SqlBaseLexer's rules for what FORMAT-3 uses): numbers with
 * Spark's suffixes (`1L`, `1S`, `1Y`, `1.5D`, `1.5F`, `1.5BD`), strings in single or double quotes
 * with backslash escapes, backticked identifiers, operators, and `--`/`/* *\/` comments; also the
 * statement tokens `;` and `=>` (named arguments) that lib/engine/sql reads.
 */
import { ExpressionError } from './errors';

type TokenKind = 'num' | 'str' | 'ident' | 'qident' | 'op' | 'eof';

export interface Token {
  readonly kind: TokenKind;
  /** The token's value: a string's content (escapes resolved), an identifier as written, an operator. */
  readonly text: string;
  /** Where it starts in the expression (0-based). */
  readonly pos: number;
  /** A number's suffix, upper-cased: L S Y D F BD, or '' */
  readonly suffix?: string;
}

const OPERATORS = [
  '<=>',
  '<>',
  '!=',
  '<=',
  '>=',
  '==',
  '||',
  '::',
  // (a STRUCT field's `name: TYPE` in a CAST's type; nothing else takes one)
  ':',
  '=>',
  '->',
  '=',
  '<',
  '>',
  '+',
  '-',
  '*',
  '/',
  '%',
  '(',
  ')',
  ',',
  '.',
  '[',
  ']',
  '!',
  '~',
  '&',
  '|',
  '^',
  ';',
];

/** The character a backslash escape stands for (Spark's unescapeSQLString); `\%` and `\_` keep the backslash for LIKE. */
function unescapeChar(c: string): string {
  switch (c) {
    case '0':
      return '\0';
    case 'b':
      return '\b';
    case 'n':
      return '\n';
    case 'r':
      return '\r';
    case 't':
      return '\t';
    case 'Z':
      return '\x1a';
    case '%':
      return '\\%';
    case '_':
      return '\\_';
    default:
      return c;
  }
}

function syntaxError(text: string, pos: number, what: string): ExpressionError {
  return new ExpressionError('PARSE_SYNTAX_ERROR', `Syntax error at or near ${what}`, text, pos);
}

export function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '-' && text[i + 1] === '-') {
      while (i < n && text[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) throw syntaxError(text, i, "'/*': the comment is not closed with */");
      i = end + 2;
      continue;
    }
    const start = i;
    if (c === "'" || c === '"') {
      let s = '';
      i++;
      for (;;) {
        if (i >= n) throw syntaxError(text, start, `${c}: the string is not closed with ${c}`);
        const d = text[i];
        if (d === c) {
          i++;
          break;
        }
        if (d === '\\' && i + 1 < n) {
          const e = text[i + 1];
          if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
            s += String.fromCharCode(Number.parseInt(text.slice(i + 2, i + 6), 16));
            i += 6;
          } else {
            s += unescapeChar(e);
            i += 2;
          }
          continue;
        }
        s += d;
        i++;
      }
      out.push({ kind: 'str', text: s, pos: start });
      continue;
    }
    if (c === '`') {
      let s = '';
      i++;
      for (;;) {
        if (i >= n) throw syntaxError(text, start, '`: the name is not closed with `');
        if (text[i] === '`') {
          if (text[i + 1] === '`') {
            s += '`';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        s += text[i++];
      }
      out.push({ kind: 'qident', text: s, pos: start });
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(text[i + 1] ?? ''))) {
      const m = /^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?/.exec(text.slice(i))!;
      i += m[0].length;
      let suffix = '';
      const rest = text.slice(i, i + 2).toUpperCase();
      if (rest === 'BD') suffix = 'BD';
      else if (/^[LSYDF]/.test(rest)) suffix = rest[0];
      i += suffix.length;
      if (i < n && /[A-Za-z0-9_]/.test(text[i])) {
        // Spark reads `1abc` as an identifier; a name that starts with a digit needs backticks here.
        while (i < n && /[A-Za-z0-9_]/.test(text[i])) i++;
        throw syntaxError(text, start, `'${text.slice(start, i)}': a name that starts with a digit must be written in backticks`);
      }
      out.push({ kind: 'num', text: m[0], pos: start, suffix });
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      while (i < n && /[A-Za-z0-9_]/.test(text[i])) i++;
      out.push({ kind: 'ident', text: text.slice(start, i), pos: start });
      continue;
    }
    const op = OPERATORS.find((o) => text.startsWith(o, i));
    if (op === undefined) throw syntaxError(text, i, `'${c}': not a character of Spark SQL here`);
    out.push({ kind: 'op', text: op, pos: i });
    i += op.length;
  }
  out.push({ kind: 'eof', text: '', pos: n });
  return out;
}
