/**
 * A Spark datetime pattern read into tokens (datetime-patterns.ts parses and prints with them):
 * quoted text, runs of one letter checked as Spark checks them (DateTimeFormatterHelper), and the
 * refusals with Spark's error classes.
 */
import { InvalidOptionError } from './errors';

type Field = 'year' | 'yearOfCentury' | 'month' | 'day' | 'dayOfYear' | 'hour' | 'hour12' | 'minute' | 'second';

/** A field only formatting prints (Spark refuses these letters when parsing, or sluice does not parse them). */
type PrintField = 'hour0to11' | 'hour1to24' | 'era' | 'quarter' | 'zoneName' | 'zoneId' | 'gmt';

export type Token =
  | { readonly kind: 'literal'; readonly text: string }
  | { readonly kind: 'number'; readonly field: Field; readonly min: number; readonly max: number }
  | { readonly kind: 'fraction'; readonly max: number }
  | { readonly kind: 'monthName'; readonly full: boolean }
  | { readonly kind: 'dayName'; readonly full: boolean }
  | { readonly kind: 'ampm' }
  | { readonly kind: 'offset'; readonly letter: 'X' | 'x' | 'Z'; readonly count: number }
  | { readonly kind: 'print'; readonly field: PrintField; readonly count: number }
  /** `[` and `]`: an optional section (Java's optionalStart / optionalEnd) */
  | { readonly kind: 'optionalStart' }
  | { readonly kind: 'optionalEnd' };

export const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
export const DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];

/** How a pattern is used: read by a CSV/JSON reader option, parsed by to_timestamp..., printed by date_format... */
export type PatternUse = 'option' | 'parse' | 'format';

/** A pattern Spark (or sluice) refuses: Spark's error class and the 0-based index in the pattern. */
export class DatetimePatternError extends InvalidOptionError {
  constructor(
    readonly errorClass: string,
    message: string,
    readonly index: number,
  ) {
    super(message, { details: { errorClass, index } });
  }
}

export function refuse(pattern: string, why: string, errorClass = 'INVALID_DATETIME_PATTERN.ILLEGAL_CHARACTER', index = 0): never {
  throw new DatetimePatternError(
    errorClass,
    `datetime pattern ${JSON.stringify(pattern)} ${why}: use Spark's pattern letters y M d D H h m s S a E X x Z and 'quoted text', e.g. 'yyyy-MM-dd HH:mm:ss'`,
    index,
  );
}

const WEEK_BASED = 'YWwuec';
const ILLEGAL = 'ABnNp';
const ILLEGAL_FOR_PARSING = 'EFqQ';
/** The letters Java 7's SimpleDateFormat (Spark 2.4's) reads: more of them than Java 8 takes is DATETIME_PATTERN_RECOGNITION. */
const LEGACY_LETTERS = 'GyYMLwWDdFEuaHkKhmsSzZX';
const RECOGNITION = 'INCONSISTENT_BEHAVIOR_CROSS_VERSION.DATETIME_PATTERN_RECOGNITION';

/**
 * Whether Spark 2.4's SimpleDateFormat takes the whole pattern: every letter outside quotes one it
 * reads (X at most three), every quote closed. Spark builds a TIMESTAMP or DATE formatter with its
 * legacy check (validatePatternString(checkLegacy = true), whatever timeParserPolicy): when the
 * new formatter refuses a pattern the legacy one takes, the refusal is
 * INCONSISTENT_BEHAVIOR_CROSS_VERSION.DATETIME_PATTERN_RECOGNITION, not the new one's own class.
 */
function legacyAccepts(pattern: string): boolean {
  for (let i = 0; i < pattern.length; ) {
    const c = pattern[i];
    if (c === "'") {
      const close = pattern.indexOf("'", i + 1);
      if (close < 0) return false;
      i = close + 1;
      continue;
    }
    if (/[A-Za-z]/.test(c)) {
      if (!LEGACY_LETTERS.includes(c)) return false;
      let end = i;
      while (pattern[end] === c) end++;
      if (c === 'X' && end - i > 3) return false;
      i = end;
      continue;
    }
    i++;
  }
  return true;
}

/**
 * Spark's checks of a run of one letter (DateTimeFormatterHelper.convertIncompatiblePattern),
 * before Java reads it; each refusal is DATETIME_PATTERN_RECOGNITION when Spark 2.4 took the
 * pattern (legacyAccepts).
 */
function sparkChecks(pattern: string, c: string, count: number, at: number, use: PatternUse): void {
  const classOf = (own: string) => (legacyAccepts(pattern) ? RECOGNITION : own);
  if (WEEK_BASED.includes(c)) {
    refuse(
      pattern,
      `has the week-based letter ${c}: all week-based patterns are unsupported since Spark 3.0; use the SQL function EXTRACT instead`,
      classOf('INCONSISTENT_BEHAVIOR_CROSS_VERSION.DATETIME_WEEK_BASED_PATTERN'),
      at,
    );
  }
  if (ILLEGAL.includes(c) || (use === 'parse' && ILLEGAL_FOR_PARSING.includes(c))) {
    refuse(
      pattern,
      `has the letter ${c}, which Spark refuses${ILLEGAL.includes(c) ? '' : ' when parsing'}`,
      classOf('INVALID_DATETIME_PATTERN.ILLEGAL_CHARACTER'),
      at,
    );
  }
  if ((count >= 5 && 'GMLEQq'.includes(c)) || (c === 'y' && count >= 7)) {
    refuse(pattern, `has ${c.repeat(count)}: too many letters`, classOf('INVALID_DATETIME_PATTERN.LENGTH'), at);
  }
}

/** A run of letters Java's DateTimeFormatter refuses: Spark's class says whether Spark 2.4 read it. */
function tooMany(pattern: string, c: string, count: number, at: number, most: number): never {
  return refuse(
    pattern,
    `has ${c.repeat(count)}, more than ${most} ${c}`,
    LEGACY_LETTERS.includes(c) ? RECOGNITION : 'INVALID_DATETIME_PATTERN.ILLEGAL_CHARACTER',
    at,
  );
}

const UNSUPPORTED = 'UNSUPPORTED_FEATURE.DATETIME_PATTERN';

function numberToken(pattern: string, letter: string, count: number, at: number, use: PatternUse): Token {
  const upTo = (field: Field, most: number): Token => {
    if (count > most) tooMany(pattern, letter, count, at, most);
    return { kind: 'number', field, min: count, max: most };
  };
  const printOnly = (field: PrintField, most: number): Token => {
    if (count > most) tooMany(pattern, letter, count, at, most);
    if (use !== 'format') refuse(pattern, `has the letter ${letter}, which sluice prints but does not read`, UNSUPPORTED, at);
    return { kind: 'print', field, count };
  };
  switch (letter) {
    case 'y':
      if (count === 2) return { kind: 'number', field: 'yearOfCentury', min: 2, max: 2 };
      return { kind: 'number', field: 'year', min: count, max: count === 1 ? 4 : Math.max(count, 4) };
    case 'M':
    case 'L':
      return upTo('month', 2);
    case 'd':
      return upTo('day', 2);
    case 'D':
      return upTo('dayOfYear', 3);
    case 'H':
      return upTo('hour', 2);
    case 'h':
      return upTo('hour12', 2);
    case 'm':
      return upTo('minute', 2);
    case 's':
      return upTo('second', 2);
    case 'K':
      return printOnly('hour0to11', 2);
    case 'k':
      return printOnly('hour1to24', 2);
    case 'G':
      return printOnly('era', 4);
    case 'Q':
    case 'q':
      return printOnly('quarter', 4);
    case 'z':
      return printOnly('zoneName', 4);
    case 'O':
      if (count !== 1 && count !== 4)
        refuse(pattern, `has ${letter.repeat(count)}: O takes a count of 1 or 4`, 'INVALID_DATETIME_PATTERN.ILLEGAL_CHARACTER', at);
      return printOnly('gmt', 4);
    case 'V':
      if (count !== 2) refuse(pattern, `has ${letter.repeat(count)}: V takes a count of 2 (VV)`, 'INVALID_DATETIME_PATTERN.ILLEGAL_CHARACTER', at);
      return printOnly('zoneId', 2);
    case 'F':
    case 'g':
    case 'v':
      return refuse(pattern, `has the letter ${letter}, which sluice does not read or print`, UNSUPPORTED, at);
    default:
      return refuse(
        pattern,
        `has the letter ${letter}, which is not a pattern letter (quote text: '${letter}')`,
        'INVALID_DATETIME_PATTERN.ILLEGAL_CHARACTER',
        at,
      );
  }
}

export function tokenize(pattern: string, use: PatternUse): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let depth = 0;
  while (i < pattern.length) {
    const c = pattern[i];
    const at = i;
    if (c === "'") {
      if (pattern[i + 1] === "'") {
        tokens.push({ kind: 'literal', text: "'" });
        i += 2;
        continue;
      }
      let text = '';
      i++;
      for (;;) {
        if (i >= pattern.length) refuse(pattern, 'has a quote that is never closed', 'INVALID_DATETIME_PATTERN.ILLEGAL_CHARACTER', at);
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
      if (c === '{' || c === '}' || c === '#') refuse(pattern, `has ${c}, which is reserved`, RECOGNITION, at);
      if (c === '[' || c === ']') {
        // optional sections (Java's DateTimeFormatterBuilder.appendPattern: a ] needs an open [, an open [ closes at the end)
        if (c === '[') depth++;
        else if (depth-- === 0) refuse(pattern, 'has ] without a [ before it', RECOGNITION, at);
        tokens.push({ kind: c === '[' ? 'optionalStart' : 'optionalEnd' });
        i++;
        continue;
      }
      tokens.push({ kind: 'literal', text: c });
      i++;
      continue;
    }
    let count = 1;
    while (pattern[i + count] === c) count++;
    i += count;
    sparkChecks(pattern, c, count, at, use);
    if (c === 'S') {
      if (count > 9) tooMany(pattern, c, count, at, 9);
      tokens.push({ kind: 'fraction', max: count });
    } else if ((c === 'M' || c === 'L') && count >= 3) {
      tokens.push({ kind: 'monthName', full: count === 4 });
    } else if (c === 'E') {
      tokens.push({ kind: 'dayName', full: count === 4 });
    } else if (c === 'a') {
      if (count > 1) tooMany(pattern, c, count, at, 1);
      tokens.push({ kind: 'ampm' });
    } else if (c === 'X' || c === 'x' || c === 'Z') {
      if (count > 5) tooMany(pattern, c, count, at, 5);
      if (use !== 'format' && count > (c === 'Z' ? 2 : 3)) {
        refuse(pattern, `has ${c.repeat(count)}: sluice reads ${c === 'Z' ? 'Z and ZZ' : `${c}, ${c}${c} and ${c}${c}${c}`}`, UNSUPPORTED, at);
      }
      tokens.push({ kind: 'offset', letter: c, count });
    } else tokens.push(numberToken(pattern, c, count, at, use));
  }
  for (; depth > 0; depth--) tokens.push({ kind: 'optionalEnd' });
  return tokens;
}
