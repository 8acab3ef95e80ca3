/** The regex functions (split, regexp_*, rlike), with Spark's semantics: patterns are Java's (java-regex.ts translates them). */
import { javaGroupCount, javaGroupNames, javaRegex } from './patterns';
import type { CallCtx, FunctionDef } from './analyze';
import { SparkRowError } from './errors';
import { call, codePoints, def, int, str } from './fn-util';
import { constantBuilder, strict, type Typed } from './typed';
import { BOOLEAN, INT, type SqlType, STRING } from './types';

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

/**
 * The pattern argument as a row's RegExp: a literal pattern is compiled once, at analysis (so an
 * invalid one is refused before any batch runs); any other is compiled for the row's value.
 */
function patternOf(c: CallCtx, pattern: Typed, flags: string): (re: unknown) => RegExp {
  const constant = pattern.constant?.value;
  const fixed = typeof constant === 'string' ? javaRegex(constant, c.az, c.pos, flags) : null;
  return (re) => fixed ?? javaRegex(re as string, null, 0, flags);
}

function checkGroupIndex(fn: string, groups: number, i: number): void {
  if (i < 0 || i > groups) {
    throw new SparkRowError(
      'INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX',
      `The value of parameter(s) \`idx\` in \`${fn}\` is invalid: Expects group index between 0 and ${groups}, but got ${i}; fix the group index`,
    );
  }
}

function litInt(v: number): Typed {
  return { type: INT, sql: String(v), name: String(v), children: [], constant: { value: v }, build: constantBuilder(v) };
}

/** (str, regexp[, idx]) with idx 1 when absent, as regexp_extract and regexp_extract_all take them. */
function extractArgs(args: readonly Typed[], c: CallCtx): Typed[] {
  return [str(c, args[0], 0), str(c, args[1], 1), args[2] ? int(c, args[2], 2) : litInt(1)];
}

/** A function of (str, regexp): `f` of the string and the pattern compiled with `flags`, null when either is null. */
function patternCall(c: CallCtx, a: Typed, p: Typed, type: SqlType, flags: string, f: (s: string, re: RegExp) => unknown): Typed {
  const ts = [str(c, a, 0), str(c, p, 1)];
  const regex = patternOf(c, ts[1], flags);
  return call(
    c,
    type,
    ts,
    strict((s, re) => f(s as string, regex(re))),
  );
}

/** RLIKE / REGEXP / REGEXP_LIKE as functions: Java's find() anywhere in the string. */
function regexpLike(a: Typed, p: Typed, c: CallCtx, word: string): Typed {
  const sql = `${word}(${a.sql}, ${p.sql})`;
  return { ...patternCall(c, a, p, BOOLEAN, '', (s, r) => r.test(s)), sql, name: sql };
}

/**
 * Spark's split: an empty pattern splits a non-empty string into its characters (at most `limit`
 * parts, the last holding the rest); otherwise Java's Pattern.split with limit (Spark passes -1 for
 * 0, so trailing empty strings are kept), where a zero-width match at the start gives no leading "".
 */
export function splitJava(s: string, re: RegExp, limit: number, pattern: string): string[] {
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

export const REGEXP_FUNCTIONS: Record<string, FunctionDef> = {
  split: def(2, 3, (args, c) => {
    const ts = [str(c, args[0], 0), str(c, args[1], 1), ...(args[2] ? [int(c, args[2], 2)] : [])];
    const regex = patternOf(c, ts[1], 'g');
    return call(
      c,
      { type: 'ARRAY', element: STRING },
      ts,
      strict((s, re, lim = -1) => splitJava(s as string, regex(re), lim as number, re as string)),
    );
  }),
  regexp_extract: def(2, 3, (args, c) => {
    const ts = extractArgs(args, c);
    const regex = patternOf(c, ts[1], '');
    return call(
      c,
      STRING,
      ts,
      strict((s, re, idx) => {
        const r = regex(re);
        const m = r.exec(s as string);
        if (m === null) return '';
        checkGroupIndex('regexp_extract', javaGroupCount(r), idx as number);
        return m[idx as number] ?? '';
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
    const regex = patternOf(c, ts[1], 'g');
    return call(
      c,
      STRING,
      ts,
      strict((s, re, rep, p) => regexpReplace(s as string, regex(re), rep as string, (p as number) - 1)),
    );
  }),
  rlike: def(2, 2, ([a, p], c) => regexpLike(a, p, c, 'RLIKE')),
  regexp: def(2, 2, ([a, p], c) => regexpLike(a, p, c, 'REGEXP')),
  regexp_like: def(2, 2, ([a, p], c) => regexpLike(a, p, c, 'REGEXP_LIKE')),
  regexp_extract_all: def(2, 3, (args, c) => {
    const ts = extractArgs(args, c);
    const regex = patternOf(c, ts[1], 'g');
    return call(
      c,
      { type: 'ARRAY', element: STRING },
      ts,
      strict((s, re, idx) => {
        const r = regex(re);
        const out: string[] = [];
        for (const m of (s as string).matchAll(r)) {
          checkGroupIndex('regexp_extract_all', javaGroupCount(r), idx as number);
          out.push(m[idx as number] ?? '');
        }
        return out;
      }),
    );
  }),
  regexp_instr: def(2, 3, (args, c) => {
    // Spark's RegExpInStr: where the first match starts (1-based, in UTF-16 units as Java's
    // Matcher.start), 0 for none; its idx is checked for an INT but not read
    const ts = [str(c, args[0], 0), str(c, args[1], 1), args[2] ? int(c, args[2], 2) : litInt(0)];
    const regex = patternOf(c, ts[1], '');
    return call(
      c,
      INT,
      ts,
      strict((s, re) => {
        const m = regex(re).exec(s as string);
        return m === null ? 0 : m.index + 1;
      }),
    );
  }),
  regexp_count: def(2, 2, ([a, p], c) => patternCall(c, a, p, INT, 'g', (s, r) => [...s.matchAll(r)].length)),
  regexp_substr: def(2, 2, ([a, p], c) =>
    patternCall(c, a, p, STRING, '', (s, r) => {
      // Spark's regexp_substr is nullif(regexp_extract(str, regexp, 0), ''): no match, or an empty one, is null
      const m = r.exec(s);
      return m === null || m[0] === '' ? null : m[0];
    }),
  ),
};
