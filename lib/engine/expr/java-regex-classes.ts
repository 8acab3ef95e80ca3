/**
 * The character classes of Java's regular expressions, for java-regex.ts: code point ranges and
 * their set operations, the predefined classes (`\d` `\w` `\s` `\h` `\v`, the POSIX classes, Java's
 * `\p{...}` names as JavaScript property escapes), and a class as the text of a JS class.
 */

export type Range = [number, number];
/** A character class: code point ranges and JS property escapes (`\p{L}`), unioned. */
export interface CharSet {
  ranges: Range[];
  props: string[];
}

export const cp = (lo: number, hi = lo): Range => [lo, hi];
export const ch = (c: string) => c.codePointAt(0)!;
export const set = (...ranges: Range[]): CharSet => ({ ranges, props: [] });

const DIGIT = set(cp(0x30, 0x39));
const WORD = set(cp(0x30, 0x39), cp(0x41, 0x5a), cp(0x5f), cp(0x61, 0x7a));
const SPACE = set(cp(0x09, 0x0d), cp(0x20)); // Java \s: [ \t\n\x0B\f\r]
const HSPACE = set(cp(0x09), cp(0x20), cp(0xa0), cp(0x1680), cp(0x180e), cp(0x2000, 0x200a), cp(0x202f), cp(0x205f), cp(0x3000));
const VSPACE = set(cp(0x0a, 0x0d), cp(0x85), cp(0x2028, 0x2029));

/** The predefined classes by their escape letter; the upper-case letter is the complement (`\D` is `[^\d]`). */
const PREDEFINED: Record<string, CharSet> = { d: DIGIT, w: WORD, s: SPACE, h: HSPACE, v: VSPACE };

/** The class of a predefined-class escape (`\d` `\D` `\w` `\W` `\s` `\S` `\h` `\H` `\v` `\V`), or undefined for another letter. */
export function predefinedClass(c: string): CharSet | undefined {
  const lower = PREDEFINED[c];
  if (lower) return lower;
  const upper = PREDEFINED[c.toLowerCase()];
  return upper && c !== c.toLowerCase() ? set(...complement(upper.ranges)) : undefined;
}

/** Java's POSIX classes (US-ASCII only, as Java's default). */
const POSIX: Record<string, CharSet> = {
  Lower: set(cp(0x61, 0x7a)),
  Upper: set(cp(0x41, 0x5a)),
  ASCII: set(cp(0, 0x7f)),
  Alpha: set(cp(0x41, 0x5a), cp(0x61, 0x7a)),
  Digit: DIGIT,
  Alnum: set(cp(0x30, 0x39), cp(0x41, 0x5a), cp(0x61, 0x7a)),
  Punct: set(cp(0x21, 0x2f), cp(0x3a, 0x40), cp(0x5b, 0x60), cp(0x7b, 0x7e)),
  Graph: set(cp(0x21, 0x7e)),
  Print: set(cp(0x20, 0x7e)),
  Blank: set(cp(0x09), cp(0x20)),
  Cntrl: set(cp(0, 0x1f), cp(0x7f)),
  XDigit: set(cp(0x30, 0x39), cp(0x41, 0x46), cp(0x61, 0x66)),
  Space: SPACE,
};

/** Java's java.lang.Character classes and `Is` binary properties with a faithful JS property. */
const NAMED_PROPS: Record<string, string[]> = {
  javalowercase: ['\\p{Lowercase}'],
  javauppercase: ['\\p{Uppercase}'],
  javaalphabetic: ['\\p{Alphabetic}'],
  javaletter: ['\\p{L}'],
  javadigit: ['\\p{Nd}'],
  javaletterordigit: ['\\p{L}', '\\p{Nd}'],
  javatitlecase: ['\\p{Lt}'],
  javaideographic: ['\\p{Ideographic}'],
  alphabetic: ['\\p{Alphabetic}'],
  ideographic: ['\\p{Ideographic}'],
  letter: ['\\p{L}'],
  lowercase: ['\\p{Lowercase}'],
  uppercase: ['\\p{Uppercase}'],
  titlecase: ['\\p{Lt}'],
  punctuation: ['\\p{P}'],
  control: ['\\p{Cc}'],
  white_space: ['\\p{White_Space}'],
  whitespace: ['\\p{White_Space}'],
  digit: ['\\p{Nd}'],
  hex_digit: ['\\p{Hex_Digit}'],
  hexdigit: ['\\p{Hex_Digit}'],
  join_control: ['\\p{Join_Control}'],
  joincontrol: ['\\p{Join_Control}'],
  noncharacter_code_point: ['\\p{Noncharacter_Code_Point}'],
  noncharactercodepoint: ['\\p{Noncharacter_Code_Point}'],
  emoji: ['\\p{Emoji}'],
};

const GENERAL_CATEGORIES = new Set('L Lu Ll Lt Lm Lo LC M Mn Mc Me N Nd Nl No P Pc Pd Ps Pe Pi Pf Po S Sm Sc Sk So Z Zs Zl Zp C Cc Cf Co Cs Cn'.split(' '));

function validProperty(p: string): boolean {
  try {
    new RegExp(p, 'u');
    return true;
  } catch {
    return false;
  }
}

/** A Unicode script name as JS spells it (`latin` → `Latin`, `old_italic` → `Old_Italic`), or null. */
function scriptProperty(name: string): string | null {
  for (const n of [name, name.replace(/(^|_)([a-z])/g, (_, s: string, c: string) => s + c.toUpperCase()), titleWords(name)]) {
    const p = `\\p{Script=${n}}`;
    if (validProperty(p)) return p;
  }
  return null;
}

function titleWords(name: string): string {
  return name
    .toLowerCase()
    .split('_')
    .map((w) => (w.length === 0 ? w : w[0].toUpperCase() + w.slice(1)))
    .join('_');
}

function normalize(ranges: Range[]): Range[] {
  const sorted = ranges.filter(([a, b]) => a <= b).sort((x, y) => x[0] - y[0]);
  const out: Range[] = [];
  for (const [a, b] of sorted) {
    const last = out[out.length - 1];
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

export function complement(ranges: Range[]): Range[] {
  const out: Range[] = [];
  let next = 0;
  for (const [a, b] of normalize(ranges)) {
    if (a > next) out.push([next, a - 1]);
    next = b + 1;
  }
  if (next <= 0x10ffff) out.push([next, 0x10ffff]);
  return out;
}

export function intersect(x: Range[], y: Range[]): Range[] {
  const out: Range[] = [];
  for (const [a, b] of normalize(x)) for (const [c, d] of normalize(y)) if (Math.max(a, c) <= Math.min(b, d)) out.push([Math.max(a, c), Math.min(b, d)]);
  return normalize(out);
}

/** Java's ASCII-only case-insensitive closure of a set of ranges. */
export function asciiCaseClosure(ranges: Range[]): Range[] {
  const out = [...ranges];
  for (const [a, b] of ranges) {
    for (const [lo, hi, shift] of [
      [0x41, 0x5a, 32],
      [0x61, 0x7a, -32],
    ] as const) {
      const s = Math.max(a, lo);
      const e = Math.min(b, hi);
      if (s <= e) out.push([s + shift, e + shift]);
    }
  }
  return out;
}

export function esc(c: number): string {
  if (c >= 0x30 && c <= 0x39) return String.fromCodePoint(c);
  if ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) return String.fromCodePoint(c);
  return `\\u{${c.toString(16)}}`;
}

export function classText(s: CharSet, negated: boolean): string {
  const body = normalize(s.ranges)
    .map(([a, b]) => (a === b ? esc(a) : `${esc(a)}-${esc(b)}`))
    .join('');
  return `[${negated ? '^' : ''}${body}${s.props.join('')}]`;
}

/** The class `\p{name}` denotes; `fail` refuses a name Java does not know or JavaScript cannot express. */
export function propertyClass(name: string, fail: (what: string) => never): CharSet {
  if (POSIX[name]) return POSIX[name];
  const eq = /^(\w+)=(\w+)$/.exec(name);
  if (eq) {
    const key = eq[1].toLowerCase();
    if ((key === 'gc' || key === 'general_category') && GENERAL_CATEGORIES.has(eq[2])) return { ranges: [], props: [`\\p{${eq[2]}}`] };
    if (key === 'sc' || key === 'script') {
      const p = scriptProperty(eq[2]);
      if (p) return { ranges: [], props: [p] };
    }
    if (key === 'blk' || key === 'block') fail(`the Unicode block \\p{${name}} is not supported (JavaScript has no blocks); use a range [\\x{...}-\\x{...}]`);
    fail(`Unknown character property name {${name}}`);
  }
  if (GENERAL_CATEGORIES.has(name)) return { ranges: [], props: [`\\p{${name}}`] };
  if (name.startsWith('In')) fail(`the Unicode block \\p{${name}} is not supported (JavaScript has no blocks); use a range [\\x{...}-\\x{...}]`);
  const bare = name.startsWith('Is') ? name.slice(2) : name;
  if (name.startsWith('Is')) {
    if (GENERAL_CATEGORIES.has(bare)) return { ranges: [], props: [`\\p{${bare}}`] };
    if (POSIX[bare]) return POSIX[bare];
  }
  const named = NAMED_PROPS[bare.toLowerCase()];
  if (named && (name.startsWith('Is') || name.startsWith('java'))) return { ranges: [], props: named };
  if (name.startsWith('Is')) {
    const p = scriptProperty(bare);
    if (p) return { ranges: [], props: [p] };
  }
  fail(`Unknown character property name {${name}}`);
}
