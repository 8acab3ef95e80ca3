/**
 * A quoted CSV field as univocity's CsvParser reads it with Spark's settings (parseQuotedValue with
 * unescapedQuoteHandling STOP_AT_DELIMITER, quotes and escapes not kept). Inside the quotes:
 *
 *     escape + quote        a quote (escape \ by default)
 *     escape + escape       one escape, when the escape is not the quote (charToEscapeQuoteEscaping
 *                           defaults to the escape then; to none when escape = quote)
 *     escape + other        both kept
 *     quote + quote         a quote. Then, unless the escape is the quote, what follows is an
 *                           "unescaped quote" (below) unless it ends the value: with the default
 *                           escape, "a""b" reads as its raw text "a""b", and "a"",b" as a" then b"
 *     quote + blank, separator or newline   the closing quote
 *     quote + other         an unescaped quote: the value becomes the quote, what was read, the
 *                           quote again and the rest of the text up to the separator or line end,
 *                           as it is ("ab"cd reads as "ab"cd)
 *
 * After the closing quote blanks are skipped; anything else up to the separator makes the value
 * the raw text again (a quote, what was read, the quote, the blanks, the rest). The end of the
 * input (of the line, without multiLine) ends the value with what was read.
 */

export interface QuotedScan {
  readonly text: string;
  readonly quote: string;
  readonly escape: string;
  /** the character that escapes the escape ('' for none) */
  readonly escapeEscape: string;
  /** whether the field's input ends at k (the end of the text, or of the line without multiLine) */
  atEnd(k: number): boolean;
  /** whether a newline (a record's end) is at k: only with multiLine */
  atNewline(k: number): boolean;
  atSep(k: number): boolean;
  /** the data character(s) at k inside quotes, and how many input characters they take */
  dataAt(k: number): readonly [string, number];
}

/** univocity's "blank": a control character or space (whitespaceRangeStart < ch <= ' ') */
const isBlank = (c: string): boolean => c > '\0' && c <= ' ';

/** The value of the quoted field whose opening quote is at k0, and where its input ends. */
export function quotedField(s: QuotedScan, k0: number): { value: string; end: number } {
  const { text, quote: q, escape: e, escapeEscape: ee } = s;
  let out = '';
  let prev = '';
  let k = k0 + 1;
  // the rest as it is, up to the separator or the line's end (STOP_AT_DELIMITER after an unescaped quote)
  const raw = (from: number, head: string): { value: string; end: number } => {
    let j = from;
    while (!s.atEnd(j) && !s.atSep(j) && !s.atNewline(j)) j++;
    return { value: head + text.slice(from, j), end: j };
  };
  for (;;) {
    if (s.atEnd(k)) return { value: out, end: k };
    const ch = text[k];
    if (prev === q && (isBlank(ch) || s.atSep(k) || s.atNewline(k))) break;
    if (ch !== q && ch !== e) {
      // an unescaped quote: the quote, what was read, the quote and this character, then the rest as it is
      if (prev === q) return raw(k + 1, `${q}${out}${q}${ch}`);
      if (prev === e && e !== '') out += e;
      while (!s.atEnd(k) && text[k] !== q && text[k] !== e && text[k] !== ee) {
        const [c, len] = s.dataAt(k);
        out += c;
        k += len;
      }
      if (s.atEnd(k)) return { value: out, end: k };
      prev = text[k++];
      continue;
    }
    // a quote or an escape (univocity's processQuoteEscape)
    let next = ch;
    if (ch === e && prev === ee && ee !== '') {
      out += e;
      next = '';
    } else if (prev === e) {
      if (ch === q) {
        out += q;
        next = '';
      } else out += prev;
    } else if (ch === q && prev === q) out += q;
    else if (prev === q) return raw(k + 1, `${q}${out}${q}${ch}`);
    prev = next;
    k++;
  }
  // after the closing quote: blanks, then the separator or the line's end; anything else makes the value raw
  if (!s.atSep(k) && !s.atNewline(k) && isBlank(text[k])) {
    const from = k;
    do {
      k++;
      if (s.atEnd(k) || s.atNewline(k)) return { value: out, end: k };
    } while (isBlank(text[k]));
    if (!s.atSep(k)) return raw(k + 1, `${q}${out}${q}${text.slice(from, k)}${text[k]}`);
  }
  return { value: out, end: k };
}
