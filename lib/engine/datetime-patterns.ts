/**
 * Spark's datetime patterns (the `dateFormat` and `timestampFormat` reader options; later
 * to_timestamp and date_format): a pattern such as `dd/MM/yyyy HH:mm:ss.SSS XXX` compiled once
 * into a parser of text. Parsing is Spark's: case-insensitive names (`Jan`, `pm`, `Mon`), numbers
 * of the letter count (`MM` two digits, `M` one or two), fractions of up to the count of `S`,
 * every character of the text consumed. A parsed value becomes a DATE or TIMESTAMP through
 * dates.ts and timestamps.ts (ISO text built and parsed there), so this module decides no
 * representation. Letters Spark refuses or that this module does not read are refused when the
 * pattern is compiled, with the letters it reads.
 *
 *     y yyyy yy   year (yy: 2000 to 2099)        M MM MMM MMMM  month (number, Jan, January)
 *     d dd        day of month                   D DDD          day of year
 *     H HH        hour 0-23                      h hh, a        hour 1-12 with AM/PM
 *     m mm        minute                         s ss           second
 *     S...S       fraction, up to 9 digits       E EEE EEEE     day of week (checked against the date)
 *     X XX XXX    offset, Z for zero             x xx xxx Z ZZ  offset without Z (+0000)
 *     'text'      literal text, '' a quote       other          literal characters
 */
import { parseDate } from './dates';
import { InvalidOptionError } from './errors';
import { parseTimestamp } from './timestamps';

type Field = 'year' | 'yearOfCentury' | 'month' | 'day' | 'dayOfYear' | 'hour' | 'hour12' | 'minute' | 'second';

type Token =
  | { readonly kind: 'literal'; readonly text: string }
  | { readonly kind: 'number'; readonly field: Field; readonly min: number; readonly max: number }
  | { readonly kind: 'fraction'; readonly max: number }
  | { readonly kind: 'monthName'; readonly full: boolean }
  | { readonly kind: 'dayName'; readonly full: boolean }
  | { readonly kind: 'ampm' }
  | { readonly kind: 'offset'; readonly letter: 'X' | 'x' | 'Z'; readonly count: number };

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];

/** The fields a pattern found in a text. */
interface Parsed {
  year?: number;
  month?: number;
  day?: number;
  dayOfYear?: number;
  hour?: number;
  hour12?: number;
  pm?: boolean;
  minute?: number;
  second?: number;
  /** The fraction's digits, as written. */
  fraction?: string;
  dayOfWeek?: number;
  /** Minutes east of UTC. */
  offsetMinutes?: number;
}

/** A compiled pattern: the DATE ("YYYY-MM-DD") or TIMESTAMP value of a text, null when the text does not match. */
export interface DatetimePattern {
  readonly pattern: string;
  parseDate(text: string): string | null;
  parseTimestamp(text: string): ReturnType<typeof parseTimestamp>;
}

function refuse(pattern: string, why: string): never {
  throw new InvalidOptionError(
    `datetime pattern ${JSON.stringify(pattern)} ${why}: use Spark's pattern letters y M d D H h m s S a E X x Z and 'quoted text', e.g. 'yyyy-MM-dd HH:mm:ss'`,
  );
}

function numberToken(pattern: string, letter: string, count: number): Token {
  const two = (field: Field): Token => {
    if (count > 2) refuse(pattern, `has ${letter.repeat(count)}, more than two ${letter}`);
    return { kind: 'number', field, min: count, max: 2 };
  };
  switch (letter) {
    case 'y':
      if (count === 2) return { kind: 'number', field: 'yearOfCentury', min: 2, max: 2 };
      return { kind: 'number', field: 'year', min: count === 1 ? 1 : count, max: count === 1 ? 4 : Math.max(count, 4) };
    case 'M':
      return two('month');
    case 'd':
      return two('day');
    case 'D':
      if (count > 3) refuse(pattern, 'has more than three D');
      return { kind: 'number', field: 'dayOfYear', min: count, max: 3 };
    case 'H':
      return two('hour');
    case 'h':
      return two('hour12');
    case 'm':
      return two('minute');
    case 's':
      return two('second');
    default:
      return refuse(pattern, `has the letter ${letter}, which sluice does not read`);
  }
}

function tokenize(pattern: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === "'") {
      if (pattern[i + 1] === "'") {
        tokens.push({ kind: 'literal', text: "'" });
        i += 2;
        continue;
      }
      let text = '';
      i++;
      for (;;) {
        if (i >= pattern.length) refuse(pattern, 'has a quote that is never closed');
        if (pattern[i] === "'") {
          if (pattern[i + 1] === "'") {
            text += "'";
            i += 2;
            continue;
          }
          i++;
          break;
        }
        text += pattern[i++];
      }
      tokens.push({ kind: 'literal', text });
      continue;
    }
    if (!/[A-Za-z]/.test(c)) {
      if (c === '[' || c === ']' || c === '{' || c === '}' || c === '#') refuse(pattern, `has ${c}, which is reserved`);
      tokens.push({ kind: 'literal', text: c });
      i++;
      continue;
    }
    let count = 1;
    while (pattern[i + count] === c) count++;
    i += count;
    if (c === 'S') {
      if (count > 9) refuse(pattern, 'has more than nine S');
      tokens.push({ kind: 'fraction', max: count });
    } else if (c === 'M' && count >= 3) {
      if (count > 4) refuse(pattern, 'has more than four M');
      tokens.push({ kind: 'monthName', full: count === 4 });
    } else if (c === 'E') {
      if (count > 4) refuse(pattern, 'has more than four E');
      tokens.push({ kind: 'dayName', full: count === 4 });
    } else if (c === 'a') {
      if (count > 1) refuse(pattern, 'has more than one a');
      tokens.push({ kind: 'ampm' });
    } else if (c === 'X' || c === 'x' || c === 'Z') {
      if (count > (c === 'Z' ? 2 : 3)) refuse(pattern, `has too many ${c}: sluice reads ${c === 'Z' ? 'Z and ZZ' : `${c}, ${c}${c} and ${c}${c}${c}`}`);
      tokens.push({ kind: 'offset', letter: c, count });
    } else tokens.push(numberToken(pattern, c, count));
  }
  return tokens;
}

function readDigits(text: string, at: number, min: number, max: number): { value: string; end: number } | null {
  let end = at;
  while (end < text.length && end - at < max && text.charCodeAt(end) >= 48 && text.charCodeAt(end) <= 57) end++;
  return end - at < min ? null : { value: text.slice(at, end), end };
}

function readName(text: string, at: number, names: readonly string[], full: boolean): { index: number; end: number } | null {
  const rest = text.slice(at).toLowerCase();
  for (let k = 0; k < names.length; k++) {
    const name = full ? names[k] : names[k].slice(0, 3);
    if (rest.startsWith(name)) return { index: k, end: at + name.length };
  }
  return null;
}

/** An offset at `at`: `Z` (X only), or ±HH, ±HHMM, ±HH:MM by the letter count. */
function readOffset(text: string, at: number, t: Extract<Token, { kind: 'offset' }>): { minutes: number; end: number } | null {
  if (t.letter === 'X' && (text[at] === 'Z' || text[at] === 'z')) return { minutes: 0, end: at + 1 };
  const sign = text[at];
  if (sign !== '+' && sign !== '-') return null;
  const hh = readDigits(text, at + 1, 2, 2);
  if (!hh) return null;
  let end = hh.end;
  let mm = '00';
  const colon = t.count === 3;
  const needsMinutes = t.letter === 'Z' || t.count >= 2;
  if (needsMinutes) {
    if (colon) {
      if (text[end] !== ':') return null;
      end++;
    }
    const m = readDigits(text, end, 2, 2);
    if (!m) return null;
    mm = m.value;
    end = m.end;
  } else if (/^\d{2}/.test(text.slice(end))) {
    // X and x alone take an optional minute part (+0530)
    mm = text.slice(end, end + 2);
    end += 2;
  }
  const minutes = Number(hh.value) * 60 + Number(mm);
  if (Number(mm) > 59 || minutes > 18 * 60) return null;
  return { minutes: sign === '-' ? -minutes : minutes, end };
}

function match(tokens: readonly Token[], text: string): Parsed | null {
  const p: Parsed = {};
  let at = 0;
  for (const t of tokens) {
    switch (t.kind) {
      case 'literal':
        if (text.slice(at, at + t.text.length).toLowerCase() !== t.text.toLowerCase()) return null;
        at += t.text.length;
        break;
      case 'number': {
        const d = readDigits(text, at, t.min, t.max);
        if (!d) return null;
        const v = Number(d.value);
        if (t.field === 'yearOfCentury') p.year = 2000 + v;
        else p[t.field] = v;
        at = d.end;
        break;
      }
      case 'fraction': {
        const d = readDigits(text, at, 1, t.max);
        if (!d) return null;
        p.fraction = d.value;
        at = d.end;
        break;
      }
      case 'monthName': {
        const n = readName(text, at, MONTHS, t.full);
        if (!n) return null;
        p.month = n.index + 1;
        at = n.end;
        break;
      }
      case 'dayName': {
        const n = readName(text, at, DAYS, t.full);
        if (!n) return null;
        p.dayOfWeek = n.index;
        at = n.end;
        break;
      }
      case 'ampm': {
        const s = text.slice(at, at + 2).toLowerCase();
        if (s !== 'am' && s !== 'pm') return null;
        p.pm = s === 'pm';
        at += 2;
        break;
      }
      case 'offset': {
        const o = readOffset(text, at, t);
        if (!o) return null;
        p.offsetMinutes = o.minutes;
        at = o.end;
        break;
      }
    }
  }
  return at === text.length ? p : null;
}

const pad = (v: number, n: number): string => String(v).padStart(n, '0');

/** The "YYYY-MM-DD" of the parsed fields (year 1970 and January 1 when absent, as Spark), or null. */
function dateOf(p: Parsed): string | null {
  const year = p.year ?? 1970;
  if (year < 1 || year > 9999) return null;
  let date: string | null;
  if (p.dayOfYear !== undefined && p.month === undefined && p.day === undefined) {
    const jan1 = Date.UTC(year < 100 ? year + 400 : year, 0, 1);
    const d = new Date(jan1 + (p.dayOfYear - 1) * 86_400_000);
    if (d.getUTCFullYear() !== (year < 100 ? year + 400 : year) || p.dayOfYear < 1) return null;
    date = `${pad(year, 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}`;
  } else date = parseDate(`${pad(year, 4)}-${pad(p.month ?? 1, 2)}-${pad(p.day ?? 1, 2)}`);
  if (date === null) return null;
  if (p.dayOfWeek !== undefined) {
    // Monday 0 .. Sunday 6; 400 years on keeps the weekday and Date.UTC's year reading
    const y = Number(date.slice(0, 4));
    const wd = new Date(Date.UTC(y + 400, Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10)))).getUTCDay();
    if ((wd + 6) % 7 !== p.dayOfWeek) return null;
  }
  return date;
}

function hourOf(p: Parsed): number | null {
  if (p.hour12 !== undefined) {
    if (p.hour12 < 1 || p.hour12 > 12) return null;
    const h = p.hour12 % 12;
    return p.pm ? h + 12 : h;
  }
  if (p.hour !== undefined) {
    if (p.hour > 23) return null;
    if (p.pm !== undefined && p.hour !== 0 && p.hour !== 12 && p.hour > 12 !== p.pm) return null;
    return p.hour;
  }
  return p.pm ? 12 : 0;
}

/** Compiles a Spark datetime pattern; an unknown letter or an unclosed quote is refused here. */
export function compileDatetimePattern(pattern: string): DatetimePattern {
  if (typeof pattern !== 'string' || pattern === '') refuse(String(pattern), 'is empty');
  const tokens = tokenize(pattern);
  return {
    pattern,
    parseDate(text: string): string | null {
      const p = match(tokens, text);
      return p === null ? null : dateOf(p);
    },
    parseTimestamp(text: string) {
      const p = match(tokens, text);
      if (p === null) return null;
      const date = dateOf(p);
      const hour = hourOf(p);
      const minute = p.minute ?? 0;
      const second = p.second ?? 0;
      if (date === null || hour === null || minute > 59 || second > 59) return null;
      const fraction = (p.fraction ?? '').padEnd(6, '0').slice(0, 6);
      const off = p.offsetMinutes ?? 0;
      const zone = `${off < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(off) / 60), 2)}:${pad(Math.abs(off) % 60, 2)}`;
      return parseTimestamp(`${date}T${pad(hour, 2)}:${pad(minute, 2)}:${pad(second, 2)}.${fraction}${zone}`);
    },
  };
}
