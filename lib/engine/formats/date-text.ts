/**
 * A DATE from text as Spark's readers take it without a dateFormat (DefaultDateFormatter, i.e.
 * DateTimeUtils.stringToDate, the same rule as CAST(text AS DATE)): the text trimmed of blanks
 * and control characters, then `yyyy`, `yyyy-[m]m` or `yyyy-[m]m-[d]d`, the last optionally
 * followed by a space or a `T` and anything (a time, ignored). A day that does not exist, or a
 * year outside 0001-9999 (the years a DATE value holds here), is null.
 */
import { parseDate } from '../dates';

const DATE_TEXT = /^([+-]?)([0-9]{4,7})(?:-([0-9]{1,2})(?:-([0-9]{1,2})(?:[ T].*)?)?)?$/s;
/**
 * Whether Spark's trimAll drops the character. It tests each UTF-8 byte with Java's isWhitespace /
 * isISOControl, and a byte of a multi-byte character is negative as a Java byte: so only U+0000 to
 * U+0020 and DEL go, not a no-break space, U+0085 or another Unicode space.
 */
function dropped(ch: string): boolean {
  const c = ch.charCodeAt(0);
  return c <= 0x20 || c === 0x7f;
}

/** The text without the blanks and control characters around it (Spark's UTF8String.trimAll). */
function trimAll(text: string): string {
  let from = 0;
  let to = text.length;
  while (from < to && dropped(text[from])) from++;
  while (to > from && dropped(text[to - 1])) to--;
  return text.slice(from, to);
}

export function dateOfText(text: string): string | null {
  const m = DATE_TEXT.exec(trimAll(text));
  if (m === null || m[1] === '-') return null;
  const year = Number(m[2]);
  if (year < 1 || year > 9999) return null;
  return parseDate(`${String(year).padStart(4, '0')}-${(m[3] ?? '1').padStart(2, '0')}-${(m[4] ?? '1').padStart(2, '0')}`);
}
