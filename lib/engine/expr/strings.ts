/** String functions, with Spark's semantics (characters are code points; positions are 1-based). */
import { javaGroupCount, javaGroupNames, javaRegex } from './analyze';
import { SparkRowError } from './errors';
import { call, codePoints, def, int, simple, str } from './fn-util';
import type { FunctionDef } from './analyze';
import { constantBuilder, strict } from './typed';
import { BOOLEAN, INT, isIntegral, STRING } from './types';

/** Spark's substring(str, pos, len): 1-based, a negative pos counts from the end, pos 0 is 1. */
function substringSql(s: string, pos: number, len = 2147483647): string {
  const chars = simple(s) ? null : codePoints(s);
  const n = chars === null ? s.length : chars.length;
  let start = pos > 0 ? pos - 1 : pos < 0 ? n + pos : 0;
  const end = start + len;
  start = Math.max(start, 0);
  if (start >= end) return '';
  return chars === null ? s.slice(start, Math.min(end, n)) : chars.slice(start, Math.min(end, n)).join('');
}

function charLength(s: string): number {
  return simple(s) ? s.length : codePoints(s).length;
}

/** Spark's one-argument trim family removes the space character only (0x20), not tabs or newlines. */
const trimStart = (s: string) => s.replace(/^ +/, '');
const trimEnd = (s: string) => s.replace(/ +$/, '');

/** Removes, from the chosen ends, every character (code point) that is one of `chars` (UTF8String.trim(trimString)). */
function trimChars(s: string, chars: string, direction: 'BOTH' | 'LEADING' | 'TRAILING'): string {
  const set = new Set(codePoints(chars));
  const cs = codePoints(s);
  let a = 0;
  let b = cs.length;
  if (direction !== 'TRAILING') while (a < b && set.has(cs[a])) a++;
  if (direction !== 'LEADING') while (b > a && set.has(cs[b - 1])) b--;
  return cs.slice(a, b).join('');
}

/**
 * trim / ltrim / rtrim (str) remove spaces; with two arguments they are Spark's (trimStr, str), as
 * TRIM([BOTH | LEADING | TRAILING] trimStr FROM str) parses to, and are named as Spark names them.
 */
function trimCall(args: readonly import('./typed').Typed[], c: Parameters<FunctionDef['resolve']>[1], direction: 'BOTH' | 'LEADING' | 'TRAILING') {
  if (args.length === 1) {
    const f = direction === 'BOTH' ? (s: string) => trimEnd(trimStart(s)) : direction === 'LEADING' ? trimStart : trimEnd;
    return call(
      c,
      STRING,
      [str(c, args[0], 0)],
      strict((s) => f(s as string)),
    );
  }
  const ts = [str(c, args[1], 1), str(c, args[0], 0)];
  const sql = `TRIM(${direction} ${args[0].sql} FROM ${args[1].sql})`;
  const name = `TRIM(${direction} ${args[0].name} FROM ${args[1].name})`;
  return {
    ...call(
      c,
      STRING,
      ts,
      strict((s, t) => trimChars(s as string, t as string, direction)),
    ),
    sql,
    name,
  };
}

function pad(s: string, len: number, p: string, left: boolean): string {
  const chars = codePoints(s);
  if (len <= 0) return '';
  if (chars.length >= len) return chars.slice(0, len).join('');
  const padChars = codePoints(p);
  if (padChars.length === 0) return s;
  const need = len - chars.length;
  const fill: string[] = [];
  for (let i = 0; i < need; i++) fill.push(padChars[i % padChars.length]);
  return left ? fill.join('') + s : s + fill.join('');
}

type ReplacementPart = string | number;

/**
 * A Java replacement string (Matcher.appendReplacement, what regexp_replace uses) as literal text and
 * group numbers: `\\x` is x, `$n` group n (more digits while the number stays a group), `${name}` a named
 * group. Java's errors (a trailing `\\`, `$` without a group, a group the pattern lacks) are row errors.
 */
function javaReplacement(rep: string, groups: number, names: Record<string, number>): ReplacementPart[] {
  const parts: ReplacementPart[] = [];
  let text = '';
  const bad = (why: string): never => {
    throw new SparkRowError(
      'INVALID_PARAMETER_VALUE.PATTERN',
      `The replacement '${rep}' of \`regexp_replace\` is invalid: ${why}; write a literal $ or \\ as \\$ or \\\\`,
    );
  };
  for (let i = 0; i < rep.length; ) {
    const c = rep[i];
    if (c === '\\') {
      if (i + 1 >= rep.length) bad('character to be escaped is missing');
      text += rep[i + 1];
      i += 2;
    } else if (c === '$') {
      i++;
      if (i >= rep.length) bad('Illegal group reference: group index is missing');
      let n: number;
      if (rep[i] === '{') {
        const end = rep.indexOf('}', i);
        const name = end < 0 ? '' : rep.slice(i + 1, end);
        if (end < 0) bad("named capturing group is missing trailing '}'");
        if (name.length === 0) bad('named capturing group has 0 length name');
        if (!(name in names)) bad(`No group with name {${name}}`);
        n = names[name];
        i = end + 1;
      } else {
        if (!/[0-9]/.test(rep[i])) bad('Illegal group reference');
        n = Number(rep[i++]);
        while (i < rep.length && /[0-9]/.test(rep[i]) && n * 10 + Number(rep[i]) <= groups) n = n * 10 + Number(rep[i++]);
        if (n > groups) bad(`No group ${n}`);
      }
      if (text) parts.push(text);
      text = '';
      parts.push(n);
    } else {
      text += c;
      i++;
    }
  }
  if (text) parts.push(text);
  return parts;
}

/** Java's Matcher.replaceAll over the region from `position` (0-based, in UTF-16 units) to the end. */
function regexpReplace(s: string, re: RegExp, rep: string, position: number): string {
  if (!(position === 0 || position < s.length)) return s;
  const groups = javaGroupCount(re);
  let parts: ReplacementPart[] | null = null;
  const tail = s.slice(position).replace(re, (...args: unknown[]) => {
    parts ??= javaReplacement(rep, groups, javaGroupNames(re));
    let out = '';
    for (const p of parts as ReplacementPart[]) out += typeof p === 'string' ? p : ((args[p] as string | undefined) ?? '');
    return out;
  });
  return s.slice(0, position) + tail;
}

/** Java's Character.toTitleCase for one UTF-16 unit: the simple mapping (the digraphs have their own title form). */
function titleCaseChar(c: string): string {
  const code = c.charCodeAt(0);
  if (code >= 0x1c4 && code <= 0x1cc) return String.fromCharCode(code - ((code - 0x1c4) % 3) + 1);
  if (code >= 0x1f1 && code <= 0x1f3) return '\u01f2';
  const u = c.toUpperCase();
  return u.length === 1 ? u : c;
}

/** Spark's initcap: the whole string lower-cased, then each character at the start or after a space (only ' ') title-cased. */
function initcap(s: string): string {
  const lower = s.toLowerCase();
  let out = '';
  for (let i = 0; i < lower.length; i++) out += i === 0 || lower[i - 1] === ' ' ? titleCaseChar(lower[i]) : lower[i];
  return out;
}

/** A regex argument compiled once when it is a literal, else per distinct pattern. */
function regexOf(source: unknown, flags: string): RegExp {
  return javaRegex(source as string, null, 0, flags);
}

/** length, char_length and character_length: the number of code points (Spark's Length). */
const charLengthDef: FunctionDef = def(1, 1, ([a], c) =>
  call(
    c,
    INT,
    [str(c, a, 0)],
    strict((s) => charLength(s as string)),
  ),
);

export const STRING_FUNCTIONS: Record<string, FunctionDef> = {
  lower: def(1, 1, ([a], c) =>
    call(
      c,
      STRING,
      [str(c, a, 0)],
      strict((s) => (s as string).toLowerCase()),
    ),
  ),
  upper: def(1, 1, ([a], c) =>
    call(
      c,
      STRING,
      [str(c, a, 0)],
      strict((s) => (s as string).toUpperCase()),
    ),
  ),
  lcase: def(1, 1, ([a], c) =>
    call(
      c,
      STRING,
      [str(c, a, 0)],
      strict((s) => (s as string).toLowerCase()),
    ),
  ),
  ucase: def(1, 1, ([a], c) =>
    call(
      c,
      STRING,
      [str(c, a, 0)],
      strict((s) => (s as string).toUpperCase()),
    ),
  ),
  length: charLengthDef,
  char_length: charLengthDef,
  trim: def(1, 2, (args, c) => trimCall(args, c, 'BOTH')),
  ltrim: def(1, 2, (args, c) => trimCall(args, c, 'LEADING')),
  rtrim: def(1, 2, (args, c) => trimCall(args, c, 'TRAILING')),
  btrim: def(1, 2, (args, c) => trimCall(args.length === 2 ? [args[1], args[0]] : args, c, 'BOTH')),
  substring: def(2, 3, (args, c) => substring(args, c)),
  substr: def(2, 3, (args, c) => substring(args, c)),
  left: def(2, 2, ([a, n], c) =>
    call(
      c,
      STRING,
      [str(c, a, 0), int(c, n, 1)],
      strict((s, k) => ((k as number) <= 0 ? '' : substringSql(s as string, 1, k as number))),
    ),
  ),
  right: def(2, 2, ([a, n], c) =>
    call(
      c,
      STRING,
      [str(c, a, 0), int(c, n, 1)],
      strict((s, k) => ((k as number) <= 0 ? '' : substringSql(s as string, -(k as number)))),
    ),
  ),
  replace: def(2, 3, (args, c) => {
    const ts = args.map((a, i) => str(c, a, i));
    return call(
      c,
      STRING,
      ts,
      strict((s, from, to = '') => ((from as string) === '' ? s : (s as string).split(from as string).join(to as string))),
    );
  }),
  lpad: def(2, 3, (args, c) => padCall(args, c, true)),
  rpad: def(2, 3, (args, c) => padCall(args, c, false)),
  instr: def(2, 2, ([a, b], c) =>
    call(
      c,
      INT,
      [str(c, a, 0), str(c, b, 1)],
      strict((s, sub) => {
        const i = (s as string).indexOf(sub as string);
        return i < 0 ? 0 : charLength((s as string).slice(0, i)) + 1;
      }),
    ),
  ),
  locate: def(2, 3, (args, c) => {
    const ts = [str(c, args[0], 0), str(c, args[1], 1), ...(args[2] ? [int(c, args[2], 2)] : [])];
    return call(c, INT, ts, ([sub, s, p]) => (row) => {
      // Spark's StringLocate: a null start is 0 (not found) before the strings are looked at
      const start = p === undefined ? 1 : p(row);
      if (start == null) return 0;
      const x = sub(row);
      if (x == null) return null;
      const y = s(row);
      if (y == null) return null;
      const from = start as number;
      if (from < 1) return 0;
      // UTF8String.indexOf: the empty string is found at 0 whatever the start
      if ((x as string).length === 0) return 1;
      const chars = codePoints(y as string);
      if (from > chars.length) return 0;
      const rest = chars.slice(from - 1).join('');
      const i = rest.indexOf(x as string);
      return i < 0 ? 0 : from + charLength(rest.slice(0, i));
    });
  }),
  initcap: def(1, 1, ([a], c) =>
    call(
      c,
      STRING,
      [str(c, a, 0)],
      strict((s) => initcap(s as string)),
    ),
  ),
  repeat: def(2, 2, ([a, n], c) =>
    call(
      c,
      STRING,
      [str(c, a, 0), int(c, n, 1)],
      strict((s, k) => ((k as number) <= 0 ? '' : (s as string).repeat(k as number))),
    ),
  ),
  startswith: def(2, 2, ([a, b], c) =>
    call(
      c,
      BOOLEAN,
      [str(c, a, 0), str(c, b, 1)],
      strict((s, p) => (s as string).startsWith(p as string)),
    ),
  ),
  endswith: def(2, 2, ([a, b], c) =>
    call(
      c,
      BOOLEAN,
      [str(c, a, 0), str(c, b, 1)],
      strict((s, p) => (s as string).endsWith(p as string)),
    ),
  ),
  contains: def(2, 2, ([a, b], c) =>
    call(
      c,
      BOOLEAN,
      [str(c, a, 0), str(c, b, 1)],
      strict((s, p) => (s as string).includes(p as string)),
    ),
  ),
  ascii: def(1, 1, ([a], c) =>
    call(
      c,
      INT,
      [str(c, a, 0)],
      strict((s) => ((s as string).length === 0 ? 0 : (s as string).codePointAt(0)!)),
    ),
  ),
  split: def(2, 3, (args, c) => {
    const ts = [str(c, args[0], 0), str(c, args[1], 1), ...(args[2] ? [int(c, args[2], 2)] : [])];
    const fixed = ts[1].constant && typeof ts[1].constant.value === 'string' ? javaRegexChecked(c, ts[1].constant.value as string, 'g') : null;
    return call(
      c,
      { type: 'ARRAY', element: STRING },
      ts,
      strict((s, re, lim = -1) => splitJava(s as string, fixed ?? regexOf(re, 'g'), lim as number, re as string)),
    );
  }),
  regexp_extract: def(2, 3, (args, c) => {
    const ts = [str(c, args[0], 0), str(c, args[1], 1), args[2] ? int(c, args[2], 2) : litInt(1)];
    const fixed = ts[1].constant && typeof ts[1].constant.value === 'string' ? javaRegexChecked(c, ts[1].constant.value as string, '') : null;
    return call(
      c,
      STRING,
      ts,
      strict((s, re, idx) => {
        const r = fixed ?? regexOf(re, '');
        const m = r.exec(s as string);
        if (m === null) return '';
        const groups = javaGroupCount(r);
        const i = idx as number;
        if (i < 0 || i > groups) {
          throw new SparkRowError(
            'INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX',
            `The value of parameter(s) \`idx\` in \`regexp_extract\` is invalid: Expects group index between 0 and ${groups}, but got ${i}; fix the group index`,
          );
        }
        return m[i] ?? '';
      }),
    );
  }),
  regexp_replace: def(3, 4, (args, c) => {
    const ts = [str(c, args[0], 0), str(c, args[1], 1), str(c, args[2], 2), args[3] ? int(c, args[3], 3) : litInt(1)];
    if (ts[3].constant === undefined) {
      throw c.az.fail(
        'DATATYPE_MISMATCH.NON_FOLDABLE_INPUT',
        `Cannot resolve "${c.sql}" due to data type mismatch: the input \`position\` should be a foldable "INT" expression; however, got ${ts[3].sql}; pass a literal position`,
        c.pos,
      );
    }
    const position = ts[3].constant.value as number | null;
    if (position != null && position <= 0) {
      throw c.az.fail(
        'DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE',
        `Cannot resolve "${c.sql}" due to data type mismatch: the \`position\` must be between (0, 2147483647] (current value = ${position}); positions count from 1`,
        c.pos,
      );
    }
    const fixed = ts[1].constant && typeof ts[1].constant.value === 'string' ? javaRegexChecked(c, ts[1].constant.value as string, 'g') : null;
    return call(
      c,
      STRING,
      ts,
      strict((s, re, rep, p) => regexpReplace(s as string, fixed ?? regexOf(re, 'g'), rep as string, (p as number) - 1)),
    );
  }),
  concat_ws: def(1, Number.POSITIVE_INFINITY, (args, c) => {
    const sep = str(c, args[0], 0);
    const rest = args.slice(1).map((a) => (a.type.type === 'ARRAY' ? a : c.az.toStringArg(a, c.sql, c.pos)));
    return call(c, STRING, [sep, ...rest], ([s, ...es]) => (row) => {
      const sv = s(row);
      if (sv == null) return null;
      const parts: string[] = [];
      for (const e of es) {
        const v = e(row);
        if (v == null) continue;
        if (Array.isArray(v)) {
          for (const x of v) if (x != null) parts.push(x as string);
        } else parts.push(v as string);
      }
      return parts.join(sv as string);
    });
  }),
  reverse: def(1, 1, ([a], c) => {
    if (a.type.type === 'ARRAY')
      return call(
        c,
        a.type,
        [a],
        strict((v) => [...(v as unknown[])].reverse()),
      );
    return call(
      c,
      STRING,
      [str(c, a, 0)],
      strict((s) =>
        codePoints(s as string)
          .reverse()
          .join(''),
      ),
    );
  }),
  rlike: def(2, 2, ([a, p], c) => regexpLike(a, p, c, 'RLIKE')),
  regexp: def(2, 2, ([a, p], c) => regexpLike(a, p, c, 'REGEXP')),
  regexp_like: def(2, 2, ([a, p], c) => regexpLike(a, p, c, 'REGEXP_LIKE')),
  regexp_extract_all: def(2, 3, (args, c) => {
    const ts = [str(c, args[0], 0), str(c, args[1], 1), args[2] ? int(c, args[2], 2) : litInt(1)];
    const fixed = ts[1].constant && typeof ts[1].constant.value === 'string' ? javaRegexChecked(c, ts[1].constant.value as string, 'g') : null;
    return call(
      c,
      { type: 'ARRAY', element: STRING },
      ts,
      strict((s, re, idx) => {
        const r = fixed ?? regexOf(re, 'g');
        const out: string[] = [];
        for (const m of (s as string).matchAll(r)) {
          checkGroupIndex('regexp_extract_all', javaGroupCount(r), idx as number);
          out.push(m[idx as number] ?? '');
        }
        return out;
      }),
    );
  }),
  regexp_count: def(2, 2, ([a, p], c) => {
    const ts = [str(c, a, 0), str(c, p, 1)];
    const fixed = ts[1].constant && typeof ts[1].constant.value === 'string' ? javaRegexChecked(c, ts[1].constant.value as string, 'g') : null;
    return call(
      c,
      INT,
      ts,
      strict((s, re) => [...(s as string).matchAll(fixed ?? regexOf(re, 'g'))].length),
    );
  }),
  regexp_substr: def(2, 2, ([a, p], c) => {
    const ts = [str(c, a, 0), str(c, p, 1)];
    const fixed = ts[1].constant && typeof ts[1].constant.value === 'string' ? javaRegexChecked(c, ts[1].constant.value as string, '') : null;
    return call(
      c,
      STRING,
      ts,
      strict((s, re) => {
        // Spark's regexp_substr is nullif(regexp_extract(str, regexp, 0), ''): no match, or an empty one, is null
        const m = (fixed ?? regexOf(re, '')).exec(s as string);
        return m === null || m[0] === '' ? null : m[0];
      }),
    );
  }),
  substring_index: def(3, 3, ([a, d, n], c) =>
    call(
      c,
      STRING,
      [str(c, a, 0), str(c, d, 1), int(c, n, 2)],
      strict((s, delim, count) => substringIndex(s as string, delim as string, count as number)),
    ),
  ),
  translate: def(3, 3, ([a, f, t], c) =>
    call(
      c,
      STRING,
      [str(c, a, 0), str(c, f, 1), str(c, t, 2)],
      strict((s, from, to) => translate(s as string, from as string, to as string)),
    ),
  ),
  character_length: charLengthDef,
  octet_length: def(1, 1, ([a], c) =>
    call(
      c,
      INT,
      [str(c, a, 0)],
      strict((s) => Buffer.byteLength(s as string, 'utf8')),
    ),
  ),
  split_part: def(3, 3, ([a, d, n], c) =>
    call(
      c,
      STRING,
      [str(c, a, 0), str(c, d, 1), int(c, n, 2)],
      strict((s, delim, part) => splitPart(s as string, delim as string, part as number)),
    ),
  ),
  format_number: def(2, 2, ([x, d], c) => {
    // DECIMAL and the integral types are formatted from their exact value, as Java's DecimalFormat of a BigDecimal / long
    const exact = x.type.type === 'DECIMAL' || isIntegral(x.type);
    const n = exact ? x : c.az.implicit(x, { type: 'DOUBLE' }, c.pos, 'argument 1 of format_number');
    const num = (v: unknown) => (typeof v === 'number' && !exact ? v : String(v));
    if (d.type.type === 'STRING') {
      // format_number(x, 'pattern'): a DecimalFormat pattern ('' is Spark's default '#,###,...,##0')
      const fixed = d.constant && typeof d.constant.value === 'string' ? decimalPattern(d.constant.value, c) : null;
      return call(
        c,
        STRING,
        [n, d],
        strict((v, f) => formatNumber(num(v), fixed ?? decimalPattern(f as string, null))),
      );
    }
    return call(
      c,
      STRING,
      [n, int(c, d, 1)],
      strict((v, k) =>
        (k as number) < 0
          ? null
          : formatNumber(num(v), { prefix: '', suffix: '', minInt: 1, minFrac: k as number, maxFrac: k as number, group: 3, dot: false }),
      ),
    );
  }),
};

/** RLIKE / REGEXP / REGEXP_LIKE as functions: Java's find() anywhere in the string. */
function regexpLike(a: import('./typed').Typed, p: import('./typed').Typed, c: Parameters<FunctionDef['resolve']>[1], word: string) {
  const ts = [str(c, a, 0), str(c, p, 1)];
  const fixed = ts[1].constant && typeof ts[1].constant.value === 'string' ? javaRegexChecked(c, ts[1].constant.value as string, '') : null;
  const sql = `${word}(${a.sql}, ${p.sql})`;
  return {
    ...call(
      c,
      BOOLEAN,
      ts,
      strict((s, re) => (fixed ?? regexOf(re, '')).test(s as string)),
    ),
    sql,
    name: sql,
  };
}

function checkGroupIndex(fn: string, groups: number, i: number): void {
  if (i < 0 || i > groups) {
    throw new SparkRowError(
      'INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX',
      `The value of parameter(s) \`idx\` in \`${fn}\` is invalid: Expects group index between 0 and ${groups}, but got ${i}; fix the group index`,
    );
  }
}

/** UTF8String.subStringIndex: the text before the count-th delimiter (from the right when count < 0); searches may overlap. */
function substringIndex(s: string, delim: string, count: number): string {
  if (delim.length === 0 || count === 0) return '';
  if (count > 0) {
    let idx = -1;
    for (let k = count; k > 0; k--) {
      idx = s.indexOf(delim, idx + 1);
      if (idx < 0) return s;
    }
    return s.slice(0, idx);
  }
  let idx = s.length - delim.length + 1;
  for (let k = count; k < 0; k++) {
    idx = idx - 1 < 0 ? -1 : s.lastIndexOf(delim, idx - 1);
    if (idx < 0) return s;
  }
  return s.slice(idx + delim.length);
}

/** Spark's translate: each character of `from` becomes the character of `to` at its place, or is removed past its end; the first mapping of a character wins. */
function translate(s: string, from: string, to: string): string {
  const map = new Map<string, string>();
  const f = codePoints(from);
  const t = codePoints(to);
  f.forEach((ch, i) => {
    if (!map.has(ch)) map.set(ch, i < t.length ? t[i] : '');
  });
  return codePoints(s)
    .map((ch) => map.get(ch) ?? ch)
    .join('');
}

/** split_part(str, delim, n): the n-th part split on the literal delimiter (from the end when n < 0), '' past the parts; n = 0 is INVALID_INDEX_OF_ZERO. */
function splitPart(s: string, delim: string, n: number): string {
  if (n === 0)
    throw new SparkRowError(
      'INVALID_INDEX_OF_ZERO',
      'The index 0 is invalid. An index shall be either < 0 or > 0 (the first element has index 1); count split_part parts from 1',
    );
  const parts = delim.length === 0 ? [s] : s.split(delim);
  const i = n > 0 ? n - 1 : parts.length + n;
  return i >= 0 && i < parts.length ? parts[i] : '';
}

function litInt(v: number) {
  return { type: INT, sql: String(v), name: String(v), children: [], constant: { value: v }, build: constantBuilder(v) };
}

function javaRegexChecked(c: Parameters<FunctionDef['resolve']>[1], source: string, flags: string): RegExp {
  return javaRegex(source, c.az, c.pos, flags);
}

/**
 * Spark's split: an empty pattern splits a non-empty string into its characters (at most `limit`
 * parts, the last holding the rest); otherwise Java's Pattern.split with limit (Spark passes -1 for
 * 0, so trailing empty strings are kept), where a zero-width match at the start gives no leading "".
 */
function splitJava(s: string, re: RegExp, limit: number, pattern: string): string[] {
  if (s.length > 0 && pattern === '') {
    const chars = codePoints(s);
    const n = limit > chars.length || limit <= 0 ? chars.length : limit;
    return [...chars.slice(0, n - 1), chars.slice(n - 1).join('')];
  }
  const out: string[] = [];
  let index = 0;
  re.lastIndex = 0;
  for (let m = re.exec(s); m !== null; m = re.exec(s)) {
    const start = m.index;
    const end = start + m[0].length;
    if (end === start) re.lastIndex = start + ((s.codePointAt(start) ?? 0) > 0xffff ? 2 : 1);
    if (limit > 0 && out.length >= limit - 1) break;
    if (index === 0 && start === 0 && end === 0) continue;
    out.push(s.slice(index, start));
    index = end;
  }
  re.lastIndex = 0;
  if (index === 0 && out.length === 0) return [s];
  out.push(s.slice(index));
  return out;
}

function substring(args: readonly import('./typed').Typed[], c: Parameters<FunctionDef['resolve']>[1]) {
  const ts = [str(c, args[0], 0), int(c, args[1], 1), ...(args[2] ? [int(c, args[2], 2)] : [])];
  return call(
    c,
    STRING,
    ts,
    strict((s, p, l) => substringSql(s as string, p as number, l === undefined ? undefined : (l as number))),
  );
}

function padCall(args: readonly import('./typed').Typed[], c: Parameters<FunctionDef['resolve']>[1], left: boolean) {
  const ts = [str(c, args[0], 0), int(c, args[1], 1), ...(args[2] ? [str(c, args[2], 2)] : [])];
  return call(
    c,
    STRING,
    ts,
    strict((s, n, p = ' ') => pad(s as string, n as number, p as string, left)),
  );
}

/** A DecimalFormat pattern's layout: digits before and after the point, grouping, literal prefix and suffix. */
interface NumberPattern {
  readonly prefix: string;
  readonly suffix: string;
  readonly minInt: number;
  readonly minFrac: number;
  readonly maxFrac: number;
  /** Digits per group (0: no grouping). */
  readonly group: number;
  /** Whether the point is shown even without fraction digits (a pattern such as '#.'). */
  readonly dot: boolean;
}

/**
 * A DecimalFormat pattern (Locale.US) of the form prefix #,##0.00## suffix. Patterns with other
 * special characters (% ‰ ¤ E ' ; -) are refused (at analysis for a literal, else for the row).
 */
function decimalPattern(pattern: string, c: Parameters<FunctionDef['resolve']>[1] | null): NumberPattern {
  const p = pattern === '' ? '#,###,###,###,###,###,##0' : pattern;
  const m = /^([^#0,.;%\u2030\u00a4'\-1-9]*)([#,]*[0,]*)(?:(\.)(0*)(#*))?([^#0,.;%\u2030\u00a4E'\-1-9]*)$/.exec(p);
  const intPart = m?.[2] ?? '';
  const lastComma = intPart.lastIndexOf(',');
  if (m === null || (intPart.replace(/,/g, '') === '' && m[3] === undefined) || (lastComma >= 0 && lastComma === intPart.length - 1)) {
    const why = `format_number's pattern '${pattern}' is not one sluice formats: it takes DecimalFormat patterns of the form [prefix]#,##0.00##[suffix] (no % \u2030 \u00a4 E ' ; or -); use a number of decimals or such a pattern`;
    if (c !== null) throw c.az.fail('INVALID_PARAMETER_VALUE.PATTERN', why, c.pos);
    throw new SparkRowError('INVALID_PARAMETER_VALUE.PATTERN', why);
  }
  return {
    prefix: m[1],
    suffix: m[6],
    minInt: (intPart.match(/0/g) ?? []).length,
    minFrac: m[4]?.length ?? 0,
    maxFrac: (m[4]?.length ?? 0) + (m[5]?.length ?? 0),
    group: lastComma < 0 ? 0 : intPart.length - lastComma - 1,
    dot: m[3] !== undefined && (m[4] ?? '') === '' && (m[5] ?? '') === '',
  };
}

/**
 * format_number as Java's DecimalFormat in Locale.US: rounded HALF_EVEN to maxFrac decimals on the
 * exact value (a double's binary value, as the JDK does since 8), trailing fraction zeros beyond
 * minFrac dropped, grouped, and the sign kept when x is negative even if it rounds to zero ("-0.00",
 * a DecimalFormat trait). format_number(x, d) is the pattern #,##0.00 with d zeros; null for d < 0.
 */
function formatNumber(v: number | string, f: NumberPattern): string {
  if (typeof v === 'number' && !Number.isFinite(v)) return Number.isNaN(v) ? 'NaN' : `${v > 0 ? '' : '-'}${f.prefix}\u221e${f.suffix}`;
  const d = f.maxFrac;
  let text = typeof v === 'number' ? plainNumber(v) : v;
  const neg = typeof v === 'number' ? v < 0 || Object.is(v, -0) : text.startsWith('-') && /[1-9]/.test(text);
  if (text.startsWith('-')) text = text.slice(1);
  let [intPart, frac = ''] = text.split('.');
  if (typeof v === 'number' && frac.length > d) [intPart, frac = ''] = exactDouble(Math.abs(v)).split('.');
  let digits = BigInt(intPart + frac.padEnd(d, '0').slice(0, Math.max(d, frac.length)));
  const dropped = frac.length - d;
  if (dropped > 0) {
    const p = 10n ** BigInt(dropped);
    const q = digits / p;
    const r = digits % p;
    digits = r * 2n > p || (r * 2n === p && q % 2n === 1n) ? q + 1n : q;
  }
  const all = digits.toString().padStart(d + 1, '0');
  let ip = all
    .slice(0, all.length - d)
    .replace(/^0+/, '')
    .padStart(f.minInt, '0');
  let fp = all.slice(all.length - d);
  while (fp.length > f.minFrac && fp.endsWith('0')) fp = fp.slice(0, -1);
  if (ip === '' && fp === '') ip = '0';
  if (f.group > 0) ip = ip.replace(new RegExp(`\\B(?=(\\d{${f.group}})+(?!\\d))`, 'g'), ',');
  const point = fp !== '' || f.dot ? `.${fp}` : '';
  return `${neg ? '-' : ''}${f.prefix}${ip}${point}${f.suffix}`;
}

/** The exact decimal value of a finite non-negative double (every binary digit, no exponent). */
function exactDouble(v: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, v);
  const bits = view.getBigUint64(0);
  const e = Number((bits >> 52n) & 0x7ffn);
  const frac = bits & ((1n << 52n) - 1n);
  const m = e === 0 ? frac : frac | (1n << 52n);
  const exp = (e === 0 ? 1 : e) - 1075;
  if (exp >= 0) return (m << BigInt(exp)).toString();
  const scale = -exp;
  const digits = (m * 5n ** BigInt(scale)).toString().padStart(scale + 1, '0');
  return `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
}

/** A double's shortest text without an exponent. */
function plainNumber(v: number): string {
  const s = String(v);
  if (!/e/i.test(s)) return s;
  const [m, e] = s.split(/e/i);
  const exp = Number(e);
  const neg = m.startsWith('-');
  const [i, f = ''] = (neg ? m.slice(1) : m).split('.');
  const digits = i + f;
  const point = i.length + exp;
  const out =
    point <= 0
      ? `0.${'0'.repeat(-point)}${digits}`
      : point >= digits.length
        ? digits + '0'.repeat(point - digits.length)
        : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return neg ? `-${out}` : out;
}
