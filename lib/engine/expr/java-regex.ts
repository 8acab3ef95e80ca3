/**
 * Java regular expressions (java.util.regex.Pattern, what Spark's RLIKE, regexp_extract, regexp_replace
 * and split compile) translated to an equivalent JavaScript RegExp source (run with the `u` flag).
 *
 * The two dialects share most syntax but differ in places where a pattern would silently match
 * differently: Java's `$` also matches before a final line terminator, `\s` is ASCII only, `\v` is
 * any vertical whitespace, `\h` `\R` `\z` `\Z` `\A` `\Q..\E` `\p{Alpha}` exist, `[a[b]]` is a union and
 * `[a-z&&[^b]]` an intersection, `[]a]` holds `]`, `(?i)` is ASCII-only and may appear mid-pattern, and
 * `(?x)` ignores whitespace. Each is translated here; what has no faithful translation (possessive
 * quantifiers, atomic groups, `\G`, Unicode blocks) is refused with an error naming it, never
 * compiled into something that matches differently.
 */

import {
  asciiCaseClosure,
  type CharSet,
  ch,
  classText,
  complement,
  cp,
  esc,
  intersect,
  predefinedClass,
  propertyClass,
  type Range,
  set,
} from './java-regex-classes';

/** Why a Java pattern cannot be compiled (its syntax is invalid, or sluice cannot translate it faithfully). */
class JavaRegexError extends Error {}

const F_I = 1; // CASE_INSENSITIVE
const F_D = 2; // UNIX_LINES
const F_M = 4; // MULTILINE
const F_S = 8; // DOTALL
const F_U = 16; // UNICODE_CASE
const F_X = 32; // COMMENTS
const FLAG_BITS: Record<string, number> = { i: F_I, d: F_D, m: F_M, s: F_S, u: F_U, x: F_X };

/** The line terminators Java's `.`, `^` and `$` know (only `\n` under UNIX_LINES). */
function terminators(flags: number): string {
  return flags & F_D ? '\\n' : '[\\n\\r\\u0085\\u2028\\u2029]';
}

function dollar(flags: number, multiline: boolean): string {
  const notInCrLf = flags & F_D ? '' : '(?!(?<=\\r)\\n)';
  if (multiline) return `(?:(?=${terminators(flags)}|(?![\\s\\S]))${notInCrLf})`;
  const tail = flags & F_D ? '\\n?' : '(?:\\r\\n|[\\n\\r\\u0085\\u2028\\u2029])?';
  return `(?:(?=${tail}(?![\\s\\S]))${notInCrLf})`;
}

function caret(flags: number): string {
  if (!(flags & F_M)) return '(?<![\\s\\S])';
  const notInCrLf = flags & F_D ? '' : '(?!(?<=\\r)\\n)';
  return `(?:(?<![\\s\\S])|(?<=${terminators(flags)})${notInCrLf}(?=[\\s\\S]))`;
}

/** Whether a Java pattern fragment has an unbounded quantifier (*, +, {n,}) outside escapes and classes. */
function unbounded(src: string): boolean {
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === '\\') {
      if (src[i + 1] === 'Q') {
        const end = src.indexOf('\\E', i);
        i = end < 0 ? src.length : end + 1;
      } else i++;
    } else if (c === '[') {
      let depth = 1;
      for (i++; i < src.length && depth > 0; i++) {
        if (src[i] === '\\') i++;
        else if (src[i] === '[') depth++;
        else if (src[i] === ']') depth--;
      }
      i--;
    } else if (c === '*' || c === '+' || (c === '{' && /^\{\d+,\}/.test(src.slice(i)))) return true;
  }
  return false;
}

class Translator {
  private i = 0;
  private flags: number;
  groups = 0;
  readonly names: Record<string, number> = {};
  /** Whether ASCII case-insensitivity is done by the JS `i` flag (UNICODE_CASE for the whole pattern). */
  jsIgnoreCase = false;

  constructor(private readonly src: string) {
    this.flags = 0;
  }

  private fail(what: string): never {
    throw new JavaRegexError(`${what} near index ${this.i}`);
  }

  private peek(k = 0): string | undefined {
    return this.src[this.i + k];
  }

  private skipComments(): void {
    if (!(this.flags & F_X)) return;
    for (;;) {
      const c = this.src[this.i];
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f' || c === '\x0B') this.i++;
      else if (c === '#') {
        while (this.i < this.src.length && this.src[this.i] !== '\n' && this.src[this.i] !== '\r') this.i++;
      } else return;
    }
  }

  translate(): string {
    const leading = /^\(\?([idmsux]+)\)/.exec(this.src);
    if (leading?.[1].includes('i') && leading[1].includes('u')) this.jsIgnoreCase = true;
    const out = this.alternation();
    if (this.i < this.src.length) this.fail("Unmatched closing ')'");
    return out;
  }

  private alternation(): string {
    let out = this.sequence();
    while (this.peek() === '|') {
      this.i++;
      out += `|${this.sequence()}`;
    }
    return out;
  }

  private sequence(): string {
    let out = '';
    for (;;) {
      this.skipComments();
      const c = this.peek();
      if (c === undefined || c === '|' || c === ')') return out;
      const atom = this.atom();
      if (atom === null) continue;
      out += atom.text + (atom.quantifiable ? this.quantifier() : '');
    }
  }

  private quantifier(): string {
    this.skipComments();
    const c = this.peek();
    let q = '';
    if (c === '*' || c === '+' || c === '?') {
      q = c;
      this.i++;
    } else if (c === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i));
      if (!m) this.fail("Illegal repetition '{'");
      if (m[3] !== undefined && m[3] !== '' && Number(m[3]) < Number(m[1])) this.fail('Illegal repetition range');
      q = m[0];
      this.i += m[0].length;
    } else return '';
    const mode = this.peek();
    if (mode === '?') {
      this.i++;
      q += '?';
    } else if (mode === '+') {
      this.fail(`the possessive quantifier '${q}+' has no JavaScript equivalent; use a greedy '${q}' if backtracking does not change the result`);
    }
    const again = this.peek();
    if (again === '*' || again === '+' || again === '?' || again === '{') this.fail(`Dangling meta character '${again}'`);
    return q;
  }

  private atom(): { text: string; quantifiable: boolean } | null {
    const c = this.peek()!;
    switch (c) {
      case '(':
        return this.group();
      case '[': {
        this.i++;
        const { set: s, negated } = this.charClass();
        return { text: classText(s, negated), quantifiable: true };
      }
      case '.':
        this.i++;
        return { text: this.flags & F_S ? '[\\s\\S]' : this.flags & F_D ? '[^\\n]' : '[^\\n\\r\\u0085\\u2028\\u2029]', quantifiable: true };
      case '^':
        this.i++;
        return { text: caret(this.flags), quantifiable: false };
      case '$':
        this.i++;
        return { text: dollar(this.flags, (this.flags & F_M) !== 0), quantifiable: false };
      case '*':
      case '+':
      case '?':
      case '{':
        this.fail(`Dangling meta character '${c}'`);
        break;
      case '\\':
        return this.escape();
    }
    const code = this.src.codePointAt(this.i)!;
    this.i += code > 0xffff ? 2 : 1;
    return { text: this.literal(code), quantifiable: true };
  }

  private literal(code: number): string {
    if (this.flags & F_I && !this.jsIgnoreCase && ((code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a))) {
      return classText(set(...asciiCaseClosure([cp(code)])), false);
    }
    if (this.flags & F_I && this.flags & F_U && !this.jsIgnoreCase && code > 0x7f) {
      this.fail('case-insensitive Unicode matching ((?iu)) is only translated when it applies to the whole pattern, from its start');
    }
    const s = String.fromCodePoint(code);
    return /[\\^$.*+?()[\]{}|/]/.test(s) ? `\\${s}` : s === '-' ? '-' : code < 0x20 || code === 0x7f ? esc(code) : s;
  }

  private group(): { text: string; quantifiable: boolean } | null {
    this.i++; // (
    const saved = this.flags;
    let open: string;
    if (this.peek() !== '?') {
      this.groups++;
      open = '(';
    } else {
      this.i++;
      const c = this.peek();
      if (c === ':' || c === '=' || c === '!') {
        this.i++;
        open = `(?${c}`;
      } else if (c === '<' && (this.peek(1) === '=' || this.peek(1) === '!')) {
        open = `(?<${this.peek(1)}`;
        this.i += 2;
      } else if (c === '<') {
        const m = /^<([a-zA-Z][a-zA-Z0-9]*)>/.exec(this.src.slice(this.i));
        if (!m) this.fail("named capturing group is missing trailing '>' or has an invalid name");
        this.i += m[0].length;
        this.groups++;
        if (m[1] in this.names) this.fail(`Named capturing group <${m[1]}> is already defined`);
        this.names[m[1]] = this.groups;
        open = `(?<${m[1]}>`;
      } else if (c === '>') {
        this.fail("the atomic group '(?>...)' has no JavaScript equivalent; use a non-capturing group '(?:...)' if backtracking does not change the result");
      } else {
        const m = /^([idmsuxU]*)(?:-([idmsuxU]*))?([:)])/.exec(this.src.slice(this.i));
        if (!m) this.fail('Unknown inline modifier');
        if (`${m[1]}${m[2] ?? ''}`.includes('U')) this.fail('the UNICODE_CHARACTER_CLASS flag (?U) is not supported');
        this.i += m[0].length;
        let f = this.flags;
        for (const x of m[1]) f |= FLAG_BITS[x];
        for (const x of m[2] ?? '') f &= ~FLAG_BITS[x];
        if (this.jsIgnoreCase && !(f & F_I)) this.fail('turning case-insensitivity off inside a (?iu) pattern is not supported');
        if (m[3] === ')') {
          this.flags = f; // applies to the rest of the enclosing group
          return null;
        }
        this.flags = f;
        open = '(?:';
      }
    }
    const from = this.i;
    const inner = this.alternation();
    if (this.peek() !== ')') this.fail('Unclosed group');
    if ((open === '(?<=' || open === '(?<!') && unbounded(this.src.slice(from, this.i))) {
      this.fail('Look-behind group does not have an obvious maximum length');
    }
    this.i++;
    this.flags = saved;
    return { text: `${open}${inner})`, quantifiable: true };
  }

  /** The text after a `\Q` up to its `\E` (or the end of the pattern), taken literally. */
  private quoted(): string {
    const end = this.src.indexOf('\\E', this.i);
    const text = end < 0 ? this.src.slice(this.i) : this.src.slice(this.i, end);
    this.i = end < 0 ? this.src.length : end + 2;
    return text;
  }

  /** A backslash escape outside a class. */
  private escape(): { text: string; quantifiable: boolean } | null {
    const start = this.i;
    this.i++; // backslash
    const c = this.peek();
    if (c === undefined) this.fail('Unexpected internal error (a pattern may not end with a backslash)');
    switch (c) {
      case 'A':
        this.i++;
        return { text: '(?<![\\s\\S])', quantifiable: false };
      case 'z':
        this.i++;
        return { text: '(?![\\s\\S])', quantifiable: false };
      case 'Z':
        this.i++;
        return { text: dollar(this.flags, false), quantifiable: false };
      case 'b':
      case 'B': {
        this.i++;
        if (this.peek() === '{') this.fail('\\b{...} boundaries are not supported');
        const w = '[\\p{L}\\p{Nd}_]';
        const at = `(?:(?<=${w})(?!${w})|(?<!${w})(?=${w}))`;
        return { text: c === 'b' ? at : `(?!${at})`, quantifiable: false };
      }
      case 'G':
        this.fail('\\G (the end of the previous match) has no JavaScript equivalent');
        break;
      case 'R':
        this.i++;
        return { text: '(?:\\r\\n|[\\n\\x0B\\f\\r\\u0085\\u2028\\u2029])', quantifiable: true };
      case 'X':
        this.fail('\\X (a grapheme cluster) is not supported');
        break;
      case 'Q': {
        this.i++;
        const parts = Array.from(this.quoted()).map((x) => this.literal(ch(x)));
        if (parts.length === 0) return null;
        // only the last character takes a following quantifier, as in Java
        return { text: parts.join(''), quantifiable: true };
      }
      case 'E':
        this.i++;
        return null; // a stray \E is ignored
      case 'k': {
        const m = /^k<([a-zA-Z][a-zA-Z0-9]*)>/.exec(this.src.slice(this.i));
        if (!m) this.fail("\\k is not followed by '<' for named capturing group");
        this.i += m[0].length;
        if (this.flags & F_I && !this.jsIgnoreCase) this.fail('a back-reference in a case-insensitive pattern is not supported');
        return { text: `\\k<${m[1]}>`, quantifiable: true };
      }
    }
    if (c >= '1' && c <= '9') {
      let n = Number(c);
      this.i++;
      for (;;) {
        const d = this.peek();
        if (d === undefined || d < '0' || d > '9') break;
        const next = n * 10 + Number(d);
        if (next > this.groups) break;
        n = next;
        this.i++;
      }
      if (this.flags & F_I && !this.jsIgnoreCase) this.fail('a back-reference in a case-insensitive pattern is not supported');
      return { text: `(?:\\${n})`, quantifiable: true };
    }
    this.i = start;
    const one = this.classEscape();
    if (one.kind === 'char') return { text: this.literal(one.code), quantifiable: true };
    return { text: classText(one.set, false), quantifiable: true };
  }

  /** A backslash escape that denotes one character or a set of them (valid inside and outside classes). */
  private classEscape(): { kind: 'char'; code: number } | { kind: 'set'; set: CharSet } {
    this.i++; // backslash
    const c = this.peek();
    if (c === undefined) this.fail('Unexpected internal error (a pattern may not end with a backslash)');
    this.i++;
    const simple: Record<string, number> = { t: 9, n: 10, r: 13, f: 12, a: 7, e: 27 };
    if (c in simple) return { kind: 'char', code: simple[c] };
    const predefined = predefinedClass(c);
    if (predefined) return { kind: 'set', set: predefined };
    switch (c) {
      case 'p':
      case 'P':
        return { kind: 'set', set: this.property(c === 'P') };
      case '0': {
        const m = /^([0-3][0-7]{2}|[0-7]{1,2})/.exec(this.src.slice(this.i));
        if (!m) this.fail('Illegal octal escape sequence');
        this.i += m[0].length;
        return { kind: 'char', code: parseInt(m[0], 8) };
      }
      case 'x': {
        const m = /^(?:([0-9a-fA-F]{2})|\{([0-9a-fA-F]+)\})/.exec(this.src.slice(this.i));
        if (!m) this.fail('Illegal hexadecimal escape sequence');
        this.i += m[0].length;
        const v = parseInt(m[1] ?? m[2], 16);
        if (v > 0x10ffff) this.fail('Hexadecimal codepoint is too big');
        return { kind: 'char', code: v };
      }
      case 'u': {
        const m = /^[0-9a-fA-F]{4}/.exec(this.src.slice(this.i));
        if (!m) this.fail('Illegal Unicode escape sequence');
        this.i += 4;
        let v = parseInt(m[0], 16);
        const low = /^\\u([dD][c-fC-F][0-9a-fA-F]{2})/.exec(this.src.slice(this.i));
        if (v >= 0xd800 && v <= 0xdbff && low) {
          v = 0x10000 + ((v - 0xd800) << 10) + (parseInt(low[1], 16) - 0xdc00);
          this.i += 6;
        }
        return { kind: 'char', code: v };
      }
      case 'c': {
        const x = this.peek();
        if (x === undefined) this.fail('Illegal control escape sequence');
        this.i++;
        return { kind: 'char', code: ch(x) ^ 64 };
      }
      case 'N':
        this.fail('\\N{name} escapes are not supported');
    }
    if (/[a-zA-Z]/.test(c) || (c >= '1' && c <= '9')) this.fail(`Illegal/unsupported escape sequence '\\${c}'`);
    const code = this.src.codePointAt(this.i - 1)!;
    if (code > 0xffff) this.i++;
    return { kind: 'char', code };
  }

  private property(negated: boolean): CharSet {
    let name: string;
    if (this.peek() === '{') {
      const end = this.src.indexOf('}', this.i);
      if (end < 0) this.fail('Unclosed character family');
      name = this.src.slice(this.i + 1, end);
      this.i = end + 1;
    } else {
      const x = this.peek();
      if (x === undefined) this.fail('Illegal character family');
      name = x;
      this.i++;
    }
    const s = propertyClass(name, (what) => this.fail(what));
    if (!negated) return s;
    if (s.props.length === 0) return set(...complement(s.ranges));
    if (s.props.length === 1) return { ranges: [], props: [s.props[0].replace(/^\\p/, '\\P')] };
    this.fail(`\\P{${name}} cannot be translated`);
  }

  /** A class after its `[`: Java's unions (`[a[b]]`), intersections (`&&`) and `]` first as a literal. */
  private charClass(): { set: CharSet; negated: boolean } {
    let negated = false;
    if (this.peek() === '^') {
      negated = true;
      this.i++;
    }
    let acc: CharSet | null = null; // the intersection so far
    let cur: CharSet = { ranges: [], props: [] };
    let empty = true;
    for (;;) {
      this.skipComments();
      const c = this.peek();
      if (c === undefined) this.fail('Unclosed character class');
      if (c === ']' && !empty) {
        this.i++;
        break;
      }
      if (c === '&' && this.peek(1) === '&') {
        this.i += 2;
        acc = acc === null ? cur : this.intersectSets(acc, cur);
        cur = { ranges: [], props: [] };
        empty = false;
        continue;
      }
      empty = false;
      if (c === '[') {
        this.i++;
        const inner = this.charClass();
        this.union(cur, inner.negated ? this.negate(inner.set) : inner.set);
        continue;
      }
      let lo: number;
      if (c === '\\') {
        if (this.peek(1) === 'Q') {
          this.i += 2;
          for (const x of this.quoted()) this.union(cur, this.single(ch(x), ch(x)));
          continue;
        }
        const e = this.classEscape();
        if (e.kind === 'set') {
          this.union(cur, e.set);
          continue;
        }
        lo = e.code;
      } else {
        lo = this.src.codePointAt(this.i)!;
        this.i += lo > 0xffff ? 2 : 1;
      }
      this.skipComments();
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== '[' && this.peek(1) !== undefined) {
        this.i++;
        this.skipComments();
        let hi: number;
        if (this.peek() === '\\') {
          const e = this.classEscape();
          if (e.kind === 'set') this.fail('Illegal character range');
          hi = e.code;
        } else {
          hi = this.src.codePointAt(this.i)!;
          this.i += hi > 0xffff ? 2 : 1;
        }
        if (hi < lo) this.fail('Illegal character range');
        this.union(cur, this.single(lo, hi));
      } else this.union(cur, this.single(lo, lo));
    }
    const result = acc === null ? cur : this.intersectSets(acc, cur);
    return { set: result, negated };
  }

  private single(lo: number, hi: number): CharSet {
    if (this.flags & F_I && this.flags & F_U && !this.jsIgnoreCase && hi > 0x7f) {
      this.fail('case-insensitive Unicode matching ((?iu)) is only translated when it applies to the whole pattern, from its start');
    }
    const r: Range[] = [[lo, hi]];
    return set(...(this.flags & F_I && !this.jsIgnoreCase ? asciiCaseClosure(r) : r));
  }

  private union(into: CharSet, s: CharSet): void {
    into.ranges.push(...s.ranges);
    into.props.push(...s.props);
  }

  private negate(s: CharSet): CharSet {
    if (s.props.length > 0) this.fail('a negated nested class holding a Unicode property cannot be translated');
    return set(...complement(s.ranges));
  }

  private intersectSets(a: CharSet, b: CharSet): CharSet {
    if (a.props.length > 0 || b.props.length > 0) this.fail("a class intersection '&&' with a Unicode property cannot be translated");
    return set(...intersect(a.ranges, b.ranges));
  }
}

/** A Java pattern as a JS RegExp source and flags (`u`, plus `i` for a whole-pattern (?iu)), and its group count. */
export function translateJavaRegex(source: string): { source: string; flags: string; groups: number; names: Record<string, number> } {
  const t = new Translator(source);
  const out = t.translate();
  return { source: out, flags: t.jsIgnoreCase ? 'iu' : 'u', groups: t.groups, names: t.names };
}
