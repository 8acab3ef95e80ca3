/**
 * Spark's datetime patterns (the `dateFormat` and `timestampFormat` reader options, to_timestamp,
 * to_date, unix_timestamp, date_format and from_unixtime): a pattern such as
 * `dd/MM/yyyy HH:mm:ss.SSS XXX` compiled once into a parser of text and a formatter of
 * TIMESTAMP values (epoch µs, UTC session time zone). Parsing is Spark's: case-insensitive names (`Jan`, `pm`, `Mon`), numbers
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
 *
 * Formatting is Java's DateTimeFormatter as Spark 3+/4 builds it (Spark writes `y` as `u`):
 * `y` the year unpadded, `yy` its last two digits, `yyy`.. padded to the count; `M`/`MM`/`MMM`/
 * `MMMM` (and `L`); `d` `D` `H` `h` `K` `k` `m` `s` padded to the count; `S`.. the fraction
 * truncated to the count (zeros past the microsecond); `a` AM/PM; `E`..`EEE` Mon, `EEEE`
 * Monday; `G` AD; `Q`/`q` 4, 04, Q4, 4th quarter; offsets of UTC: `X`.. Z, `x` +00, `xx` +0000,
 * `xxx` +00:00, `Z`..`ZZZ` +0000, `ZZZZ` GMT, `ZZZZZ` Z, `O` GMT, `z` UTC, `VV` UTC.
 * `[` and `]` (optional sections) print their content; parsing reads a section when its content
 * matches and otherwise rolls it back (Java's optionalStart). The refusals are Spark's, with its
 * classes (DatetimePatternError.errorClass): week-based letters `Y w W u e c`
 * (INCONSISTENT_BEHAVIOR_CROSS_VERSION.DATETIME_WEEK_BASED_PATTERN), `A B n N p`
 * (INVALID_DATETIME_PATTERN.ILLEGAL_CHARACTER; also `E F q Q` when parsing), five `G M L E Q q`
 * or seven `y` (INVALID_DATETIME_PATTERN.LENGTH), more letters than Java takes (`HHH`, `aa`:
 * INCONSISTENT_BEHAVIOR_CROSS_VERSION.DATETIME_PATTERN_RECOGNITION), and that class too for any
 * of these refusals of a pattern Spark 2.4's SimpleDateFormat took (Spark's legacy check). The
 * letters are read, and refused, by datetime-pattern-tokens.ts.
 */
import { dateOfEpochDay, epochDayOf, parseDate } from './dates';
import { DAYS, MONTHS, refuse, type Token, tokenize } from './datetime-pattern-tokens';
import { type Micros, parseTimestamp } from './timestamps';

export { DatetimePatternError } from './datetime-pattern-tokens';

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
  /**
   * Why a text does not match, in Java's words as Spark reports them (`Text '...' could not be
   * parsed at index 4`), or null when it parses.
   */
  whyNot(text: string): string | null;
  /** The text of a TIMESTAMP value (epoch µs, UTC) in the pattern. */
  format(us: Micros): string;
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

/** Where a text stops matching: the index, and whether every token matched and text was left over. */
interface Mismatch {
  readonly at: number;
  readonly trailing: boolean;
}

/** The index of the optionalEnd closing the optionalStart at `start` (tokenize closes every section). */
function sectionEnd(tokens: readonly Token[], start: number): number {
  let depth = 0;
  for (let i = start; i < tokens.length; i++) {
    const k = tokens[i].kind;
    if (k === 'optionalStart') depth++;
    else if (k === 'optionalEnd' && --depth === 0) return i;
  }
  return tokens.length;
}

function match(tokens: readonly Token[], text: string): Parsed | Mismatch {
  const p: Parsed = {};
  const r = matchFrom(tokens, 0, tokens.length, text, 0, p);
  if (typeof r !== 'number') return r;
  return r === text.length ? p : { at: r, trailing: true };
}

/**
 * Matches tokens[from, to) at text index `start`, filling `p`: the index after the match, or the
 * mismatch. An optional section is matched as Java does: when its content does not match, the
 * text and the fields it read are rolled back and matching goes on after the section.
 */
function matchFrom(tokens: readonly Token[], from: number, to: number, text: string, start: number, p: Parsed): number | Mismatch {
  let at = start;
  const fail = (): Mismatch => ({ at, trailing: false });
  for (let i = from; i < to; i++) {
    const t = tokens[i];
    switch (t.kind) {
      case 'optionalStart': {
        const end = sectionEnd(tokens, i);
        const inner: Parsed = { ...p };
        const r = matchFrom(tokens, i + 1, end, text, at, inner);
        if (typeof r === 'number') {
          Object.assign(p, inner);
          at = r;
        }
        i = end;
        break;
      }
      case 'optionalEnd':
        break;
      case 'literal':
        if (text.slice(at, at + t.text.length).toLowerCase() !== t.text.toLowerCase()) return fail();
        at += t.text.length;
        break;
      case 'number': {
        const d = readDigits(text, at, t.min, t.max);
        if (!d) return fail();
        const v = Number(d.value);
        if (t.field === 'yearOfCentury') p.year = 2000 + v;
        else p[t.field] = v;
        at = d.end;
        break;
      }
      case 'fraction': {
        const d = readDigits(text, at, 1, t.max);
        if (!d) return fail();
        p.fraction = d.value;
        at = d.end;
        break;
      }
      case 'monthName': {
        const n = readName(text, at, MONTHS, t.full);
        if (!n) return fail();
        p.month = n.index + 1;
        at = n.end;
        break;
      }
      case 'dayName': {
        const n = readName(text, at, DAYS, t.full);
        if (!n) return fail();
        p.dayOfWeek = n.index;
        at = n.end;
        break;
      }
      case 'ampm': {
        const s = text.slice(at, at + 2).toLowerCase();
        if (s !== 'am' && s !== 'pm') return fail();
        p.pm = s === 'pm';
        at += 2;
        break;
      }
      case 'offset': {
        const o = readOffset(text, at, t);
        if (!o) return fail();
        p.offsetMinutes = o.minutes;
        at = o.end;
        break;
      }
      case 'print':
        return fail();
    }
  }
  return at;
}

const isMismatch = (m: Parsed | Mismatch): m is Mismatch => typeof (m as Mismatch).trailing === 'boolean';

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

const MONTH_NAMES = MONTHS.map((m) => m[0].toUpperCase() + m.slice(1));
const DAY_NAMES = DAYS.map((d) => d[0].toUpperCase() + d.slice(1));
const QUARTERS = ['1st quarter', '2nd quarter', '3rd quarter', '4th quarter'];
const MICROS_PER_DAY = 86_400_000_000;
const BIG_DAY = 86_400_000_000n;

/** The calendar fields of a TIMESTAMP value (UTC); µs beyond 2^53 are split as bigint, never through a double. */
interface Fields {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly dayOfYear: number;
  /** Monday 0 .. Sunday 6. */
  readonly dayOfWeek: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly micros: number;
}

function fieldsOf(us: Micros): Fields {
  let day: number;
  let rest: number;
  if (typeof us === 'number') {
    day = Math.floor(us / MICROS_PER_DAY);
    rest = us - day * MICROS_PER_DAY;
  } else {
    let d = us / BIG_DAY;
    let r = us % BIG_DAY;
    if (r < 0n) {
      d -= 1n;
      r += BIG_DAY;
    }
    day = Number(d);
    rest = Number(r);
  }
  const date = dateOfEpochDay(day);
  const year = Number(date.slice(0, 4));
  const secs = Math.floor(rest / 1_000_000);
  return {
    year,
    month: Number(date.slice(5, 7)),
    day: Number(date.slice(8, 10)),
    dayOfYear: day - epochDayOf(`${date.slice(0, 4)}-01-01`) + 1,
    dayOfWeek: (((day + 3) % 7) + 7) % 7,
    hour: Math.floor(secs / 3600),
    minute: Math.floor(secs / 60) % 60,
    second: secs % 60,
    micros: rest % 1_000_000,
  };
}

function formatNumber(t: Extract<Token, { kind: 'number' }>, f: Fields): string {
  switch (t.field) {
    case 'yearOfCentury':
      return pad(f.year % 100, 2);
    case 'hour12':
      return pad(f.hour % 12 || 12, t.min);
    case 'year':
    case 'month':
    case 'day':
    case 'dayOfYear':
    case 'hour':
    case 'minute':
    case 'second':
      return pad(f[t.field], t.min);
  }
}

/** An offset of UTC (the session time zone) as Java prints it for the letter and count. */
function formatOffset(t: Extract<Token, { kind: 'offset' }>): string {
  if (t.letter === 'X') return 'Z';
  if (t.letter === 'x') return t.count === 1 ? '+00' : t.count === 3 || t.count === 5 ? '+00:00' : '+0000';
  return t.count <= 3 ? '+0000' : t.count === 4 ? 'GMT' : 'Z';
}

function formatPrint(t: Extract<Token, { kind: 'print' }>, f: Fields): string {
  switch (t.field) {
    case 'hour0to11':
      return pad(f.hour % 12, t.count);
    case 'hour1to24':
      return pad(f.hour || 24, t.count);
    case 'era':
      return t.count === 4 ? 'Anno Domini' : 'AD';
    case 'quarter': {
      const q = Math.floor((f.month - 1) / 3) + 1;
      return t.count <= 2 ? pad(q, t.count) : t.count === 3 ? `Q${q}` : QUARTERS[q - 1];
    }
    case 'zoneName':
      return t.count === 4 ? 'Coordinated Universal Time' : 'UTC';
    case 'zoneId':
      return 'UTC';
    case 'gmt':
      return 'GMT';
  }
}

function formatTokens(tokens: readonly Token[], us: Micros): string {
  const f = fieldsOf(us);
  let out = '';
  for (const t of tokens) {
    switch (t.kind) {
      case 'literal':
        out += t.text;
        break;
      case 'number':
        out += formatNumber(t, f);
        break;
      case 'fraction':
        // Java prints the nanosecond field truncated to the count: µs, then zeros
        out += `${pad(f.micros, 6)}000`.slice(0, t.max);
        break;
      case 'monthName':
        out += t.full ? MONTH_NAMES[f.month - 1] : MONTH_NAMES[f.month - 1].slice(0, 3);
        break;
      case 'dayName':
        out += t.full ? DAY_NAMES[f.dayOfWeek] : DAY_NAMES[f.dayOfWeek].slice(0, 3);
        break;
      case 'ampm':
        out += f.hour < 12 ? 'AM' : 'PM';
        break;
      case 'offset':
        out += formatOffset(t);
        break;
      case 'print':
        out += formatPrint(t, f);
        break;
      case 'optionalStart':
      case 'optionalEnd':
        // a timestamp has every field: an optional section prints its content
        break;
    }
  }
  return out;
}

function timestampOf(p: Parsed): Micros | null {
  const date = dateOf(p);
  const hour = hourOf(p);
  const minute = p.minute ?? 0;
  const second = p.second ?? 0;
  if (date === null || hour === null || minute > 59 || second > 59) return null;
  const fraction = (p.fraction ?? '').padEnd(6, '0').slice(0, 6);
  const off = p.offsetMinutes ?? 0;
  const zone = `${off < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(off) / 60), 2)}:${pad(Math.abs(off) % 60, 2)}`;
  return parseTimestamp(`${date}T${pad(hour, 2)}:${pad(minute, 2)}:${pad(second, 2)}.${fraction}${zone}`);
}

function compiled(pattern: string, tokens: readonly Token[]): DatetimePattern {
  return {
    pattern,
    parseDate(text: string): string | null {
      const p = match(tokens, text);
      return isMismatch(p) ? null : dateOf(p);
    },
    parseTimestamp(text: string) {
      const p = match(tokens, text);
      return isMismatch(p) ? null : timestampOf(p);
    },
    whyNot(text: string): string | null {
      const p = match(tokens, text);
      if (isMismatch(p)) {
        return p.trailing ? `Text '${text}' could not be parsed, unparsed text found at index ${p.at}` : `Text '${text}' could not be parsed at index ${p.at}`;
      }
      return timestampOf(p) === null ? `Text '${text}' could not be parsed: its fields are not a date and time of years 1 to 9999` : null;
    },
    format: (us) => formatTokens(tokens, us),
  };
}

/** Compiles a reader option's Spark datetime pattern; an unknown letter or an unclosed quote is refused here. */
export function compileDatetimePattern(pattern: string): DatetimePattern {
  if (typeof pattern !== 'string' || pattern === '') refuse(String(pattern), 'is empty');
  return compiled(pattern, tokenize(pattern, 'option'));
}

/**
 * Compiles the pattern of a datetime function (to_timestamp, date_format...), once per query:
 * refused as Spark refuses it for the use, with DatetimePatternError (Spark's class, the index).
 */
export function compileSparkDatetimePattern(pattern: string, use: 'parse' | 'format'): DatetimePattern {
  return compiled(pattern, tokenize(pattern, use));
}
