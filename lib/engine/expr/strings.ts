/** String functions, with Spark's semantics (characters are code points; positions are 1-based). */
import { javaRegex } from './analyze';
import { SparkRowError } from './errors';
import { call, codePoints, def, int, simple, str } from './fn-util';
import type { FunctionDef } from './analyze';
import { constantBuilder, strict } from './typed';
import { BOOLEAN, INT, STRING } from './types';

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

/** Spark's trim family removes the space character only (0x20), not tabs or newlines. */
const trimStart = (s: string) => s.replace(/^ +/, '');
const trimEnd = (s: string) => s.replace(/ +$/, '');

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

/** A Java replacement string ($1, \$) as JS's ($1, $$). */
function javaReplacement(rep: string): string {
  let out = '';
  for (let i = 0; i < rep.length; i++) {
    const c = rep[i];
    if (c === '\\' && i + 1 < rep.length) out += rep[++i] === '$' ? '$$' : rep[i];
    else if (c === '$' && /[0-9]/.test(rep[i + 1] ?? '')) out += '$';
    else if (c === '$') out += '$$';
    else out += c;
  }
  return out;
}

function initcap(s: string): string {
  return s
    .split(' ')
    .map((w) => (w.length === 0 ? w : w[0].toUpperCase() + w.slice(1).toLowerCase()))
    .join(' ');
}

/** A regex argument compiled once when it is a literal, else per distinct pattern. */
function regexOf(source: unknown, flags: string): RegExp {
  return javaRegex(source as string, null, 0, flags);
}

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
  length: def(1, 1, ([a], c) =>
    call(
      c,
      INT,
      [str(c, a, 0)],
      strict((s) => charLength(s as string)),
    ),
  ),
  char_length: def(1, 1, ([a], c) =>
    call(
      c,
      INT,
      [str(c, a, 0)],
      strict((s) => charLength(s as string)),
    ),
  ),
  trim: def(1, 1, ([a], c) =>
    call(
      c,
      STRING,
      [str(c, a, 0)],
      strict((s) => trimEnd(trimStart(s as string))),
    ),
  ),
  ltrim: def(1, 1, ([a], c) =>
    call(
      c,
      STRING,
      [str(c, a, 0)],
      strict((s) => trimStart(s as string)),
    ),
  ),
  rtrim: def(1, 1, ([a], c) =>
    call(
      c,
      STRING,
      [str(c, a, 0)],
      strict((s) => trimEnd(s as string)),
    ),
  ),
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
      const start = p === undefined ? 1 : p(row);
      const x = sub(row);
      const y = s(row);
      if (x == null || y == null) return null;
      if (start == null) return 0;
      const from = start as number;
      if (from < 1) return 0;
      const chars = codePoints(y as string);
      const i = chars
        .slice(from - 1)
        .join('')
        .indexOf(x as string);
      return i < 0
        ? 0
        : from +
            charLength(
              chars
                .slice(from - 1)
                .join('')
                .slice(0, i),
            );
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
      strict((s, re, lim = -1) => splitJava(s as string, fixed ?? regexOf(re, 'g'), lim as number)),
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
        const groups = m === null ? new RegExp(`${r.source}|`).exec('')!.length - 1 : m.length - 1;
        const i = idx as number;
        if (i < 0 || i > groups) {
          throw new SparkRowError(
            'INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX',
            `The value of parameter(s) \`idx\` in \`regexp_extract\` is invalid: Expects group index between 0 and ${groups}, but got ${i}; fix the group index`,
          );
        }
        return m === null ? '' : (m[i] ?? '');
      }),
    );
  }),
  regexp_replace: def(3, 3, (args, c) => {
    const ts = args.map((a, i) => str(c, a, i));
    const fixed = ts[1].constant && typeof ts[1].constant.value === 'string' ? javaRegexChecked(c, ts[1].constant.value as string, 'g') : null;
    return call(
      c,
      STRING,
      ts,
      strict((s, re, rep) => (s as string).replace(fixed ?? regexOf(re, 'g'), javaReplacement(rep as string))),
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
  format_number: def(2, 2, ([x, d], c) => {
    const n = x.type.type === 'DECIMAL' ? x : c.az.implicit(x, { type: 'DOUBLE' }, c.pos, 'argument 1 of format_number');
    return call(
      c,
      STRING,
      [n, int(c, d, 1)],
      strict((v, k) => formatNumber(typeof v === 'string' ? v : (v as number), k as number)),
    );
  }),
};

function litInt(v: number) {
  return { type: INT, sql: String(v), name: String(v), children: [], constant: { value: v }, build: constantBuilder(v) };
}

function javaRegexChecked(c: Parameters<FunctionDef['resolve']>[1], source: string, flags: string): RegExp {
  return javaRegex(source, c.az, c.pos, flags);
}

/** Java's String.split(regex, limit) as Spark's split: limit > 0 at most limit parts; otherwise all, keeping trailing empty strings (Spark passes -1). */
function splitJava(s: string, re: RegExp, limit: number): string[] {
  const out: string[] = [];
  let last = 0;
  re.lastIndex = 0;
  if (s.length === 0) return [''];
  for (let m = re.exec(s); m !== null; m = re.exec(s)) {
    if (m[0].length === 0) {
      if (m.index >= s.length) break;
      if (m.index === 0) {
        re.lastIndex++;
        continue;
      }
    }
    if (limit > 0 && out.length === limit - 1) break;
    out.push(s.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[0].length === 0) re.lastIndex++;
  }
  out.push(s.slice(last));
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

/** format_number(x, d): grouped thousands and d decimals, HALF_EVEN as Java's DecimalFormat; null for d < 0. */
function formatNumber(v: number | string, d: number): string | null {
  if (d < 0) return null;
  if (typeof v === 'number' && !Number.isFinite(v)) return Number.isNaN(v) ? 'NaN' : v > 0 ? '∞' : '-∞';
  const text = typeof v === 'number' ? plainNumber(v) : v;
  const neg = text.startsWith('-');
  const [intPart, frac = ''] = (neg ? text.slice(1) : text).split('.');
  let digits = BigInt(intPart + frac.padEnd(d, '0').slice(0, Math.max(d, frac.length)));
  const dropped = frac.length - d;
  if (dropped > 0) {
    const p = 10n ** BigInt(dropped);
    const q = digits / p;
    const r = digits % p;
    digits = r * 2n > p || (r * 2n === p && q % 2n === 1n) ? q + 1n : q;
  }
  const all = digits.toString().padStart(d + 1, '0');
  const ip = all.slice(0, all.length - d).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const fp = d > 0 ? `.${all.slice(all.length - d)}` : '';
  const out = ip + fp;
  return neg && /[1-9]/.test(out) ? `-${out}` : out;
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
