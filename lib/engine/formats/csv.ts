/**
 * CSV files as Spark's reader (univocity-parsers with CSVOptions' settings) reads them, written
 * here rather than taken from csv-parse: the rules that decide a value are univocity's, not any
 * RFC 4180 parser's, and each needs the field's quoting and the record's line:
 *
 *     columns      by position (enforceSchema); a record with another field count is a dead letter
 *     sep          `,`; several characters are one separator (`||`), `\t` a tab
 *     quote        `"`: a field is quoted when it starts with it (after leading blanks only with
 *                  ignoreLeadingWhiteSpace); the separator and (multiLine) newlines are data inside
 *     escape       `\`: escape + quote is a quote inside a quoted field; a doubled quote is one
 *                  only when escape is the quote (csv-quoted.ts has univocity's rules)
 *     nullValue    an unquoted empty field reads as it ("" unless set), a quoted "" as emptyValue
 *     emptyValue   ("" unless set); a field that reads as nullValue is null: unset, both empty
 *                  fields are null; nullValue set, a quoted "" is the empty string
 *     header       each file's first record is dropped; its names are checked against the
 *                  schema's only with enforceSchema false (a header that differs refuses the file)
 *     blank lines  skipped, as lines starting with the comment character (unset: none) are
 *                  (with multiLine a line of blanks is a record, unless ignoreLeadingWhiteSpace);
 *                  the line of a record is where it starts
 *     lineSep      unset: \n, \r or \r\n ends a line (multiLine: \n, and the file's first line
 *                  break, so a lone \r is data unless that is \r); set (1 or 2 characters): only it does
 *     multiLine    false: every line is a record (a quote left open takes the rest of its line)
 *     ignoreLeadingWhiteSpace, ignoreTrailingWhiteSpace: blanks around unquoted values dropped
 *
 * Every declared column is converted on every record (text-values.ts): a value that does not fit
 * makes the record a dead letter with its file and line, never a row with a null.
 */
import { InvalidOptionError } from '../errors';
import type { ReadResult, Row } from '../ports';
import type { Column, Schema } from '../schema';
import { ChunkBuilder } from '../lines';
import { boolOption, charOption, patternOption, type ReaderOptions } from './options';
import { BadText, type TextPatterns, valueOfText } from './text-values';
import { type QuotedScan, quotedField } from './csv-quoted';

export interface CsvOptions {
  readonly header: boolean;
  readonly sep: string;
  readonly quote: string;
  readonly escape: string;
  /** charToEscapeQuoteEscaping: what escapes the escape inside quotes (null: the escape itself, none when it is the quote) */
  readonly escapeEscape: string | null;
  /** the token an unquoted empty field reads as ("" unless set); a token equal to it is null */
  readonly nullValue: string;
  /** the token a quoted empty field ("") reads as: "" unless set */
  readonly emptyValue: string;
  readonly multiLine: boolean;
  /** a line starting with it is skipped (unset: no comments) */
  readonly comment: string | null;
  /** what ends a record (unset: \n, \r or \r\n) */
  readonly lineSep: string | null;
  /** false: a header whose names differ from the schema's refuses the file */
  readonly enforceSchema: boolean;
  readonly ignoreLeading: boolean;
  readonly ignoreTrailing: boolean;
  readonly patterns: TextPatterns;
}

/** Spark's CSV options with its defaults; a bad one is refused when the query is built. */
export function csvOptions(options: ReaderOptions): CsvOptions {
  const sep = options.sep ?? options.delimiter;
  const o: CsvOptions = {
    header: boolOption(options, 'header', false),
    sep: sep === undefined ? ',' : delimiterOption(String(sep)),
    quote: quoteCharOption(options, 'quote', '"'),
    escape: quoteCharOption(options, 'escape', '\\'),
    escapeEscape: escapeEscapeOption(options),
    nullValue: options.nullValue === undefined ? '' : String(options.nullValue),
    emptyValue: options.emptyValue === undefined ? '' : String(options.emptyValue),
    multiLine: boolOption(options, 'multiLine', false),
    comment: commentOption(options),
    lineSep: lineSepOption(options),
    enforceSchema: boolOption(options, 'enforceSchema', true),
    ignoreLeading: boolOption(options, 'ignoreLeadingWhiteSpace', false),
    ignoreTrailing: boolOption(options, 'ignoreTrailingWhiteSpace', false),
    patterns: {
      date: patternOption(options, 'dateFormat'),
      timestamp: patternOption(options, 'timestampFormat'),
      floats: {
        nan: options.nanValue === undefined ? 'NaN' : String(options.nanValue),
        positiveInf: options.positiveInf === undefined ? 'Inf' : String(options.positiveInf),
        negativeInf: options.negativeInf === undefined ? '-Inf' : String(options.negativeInf),
      },
    },
  };
  if (o.sep === o.quote || o.sep.includes('\n') || o.sep.includes('\r')) {
    throw new InvalidOptionError(`option sep=${JSON.stringify(o.sep)} cannot be the quote or a newline: choose another separator, e.g. .option('sep', ';')`);
  }
  return o;
}

/** quote and escape: one character, or empty for none (Spark's getChar: \\u0000, which turns quoting off). */
export function quoteCharOption(options: ReaderOptions, name: string, fallback: string): string {
  return options[name] !== undefined && String(options[name]) === '' ? '\0' : charOption(options, name, fallback);
}

/** Spark's charToEscapeQuoteEscaping: one character; unset or empty, univocity's default. */
export function escapeEscapeOption(options: ReaderOptions): string | null {
  const v = options.charToEscapeQuoteEscaping;
  return v === undefined || String(v) === '' ? null : charOption(options, 'charToEscapeQuoteEscaping', '\\');
}

/** Spark's comment: one character (an empty text is no comment character, as Spark's isCommentSet). */
export function commentOption(options: ReaderOptions): string | null {
  if (options.comment === undefined || String(options.comment) === '') return null;
  return charOption(options, 'comment', '#');
}

/** Spark's CSV lineSep: one character, or two (\r\n); unset: Hadoop's \n, \r or \r\n. */
export function lineSepOption(options: ReaderOptions): string | null {
  if (options.lineSep === undefined) return null;
  const t = String(options.lineSep);
  if (t === '' || t.length > 2) {
    throw new InvalidOptionError(`option lineSep=${JSON.stringify(t)} must be one character (or \\r\\n), e.g. .option('lineSep', '\\n')`);
  }
  return t;
}

/**
 * Spark's sep (CSVExprUtils.toDelimiterStr): one or more characters, each either itself or a
 * backslash escape (\t \r \b \f \" \' \\); a lone backslash or another escape is refused.
 */
export function delimiterOption(text: string): string {
  if (text === '') throw new InvalidOptionError("option sep must not be empty: give a separator, e.g. .option('sep', ',')");
  const escapes: Record<string, string> = { t: '\t', r: '\r', b: '\b', f: '\f', '"': '"', "'": "'", '\\': '\\' };
  let out = '';
  for (let i = 0; i < text.length; ) {
    if (text[i] !== '\\') {
      out += text[i++];
      continue;
    }
    const e = i + 1 < text.length ? escapes[text[i + 1]] : undefined;
    if (e === undefined) {
      throw new InvalidOptionError(
        `option sep=${JSON.stringify(text)} has an unsupported escape at ${i}: use \\t, \\r, \\b, \\f, \\", \\' or \\\\, or the character itself`,
      );
    }
    out += e;
    i += 2;
  }
  return out;
}

/**
 * The line separator univocity detects in a multiLine file (Spark turns its detection on when no
 * lineSep is set), as its LineSeparatorDetector: the file's first line-break character, \r\n when
 * it is a \r followed by \n (a \n followed by \r is \n). Inside a quoted value it reads as \n;
 * outside quotes it, and a \n (univocity's normalized newline), end a record.
 */
function lineSeparatorOf(text: string): string {
  const at = text.search(/[\r\n]/);
  if (at < 0) return '\n';
  return text[at] === '\r' && text[at + 1] === '\n' ? '\r\n' : text[at];
}

export interface Field {
  readonly text: string;
  readonly quoted: boolean;
}

export interface CsvRecord {
  readonly line: number;
  readonly raw: string;
  readonly fields: Field[];
}

/** The records of a file's text, with the line each starts on; blank and comment lines skipped. */
export function* csvRecords(text: string, o: CsvOptions): Generator<CsvRecord> {
  const newline = o.multiLine && o.lineSep === null ? lineSeparatorOf(text) : '\n';
  const n = text.length;
  // the length of the line ending at k, 0 when there is none: lineSep when set (Hadoop's reader
  // splits at it only); else \n, \r or \r\n, but with multiLine (univocity reads the file) only the
  // detected separator and \n (its normalized newline): a \r is data when the file's first line
  // break is \n, and a lone one when it is \r\n
  const lineSep = o.lineSep;
  const eolAt =
    lineSep !== null
      ? (k: number) => (text.startsWith(lineSep, k) ? lineSep.length : 0)
      : o.multiLine && newline === '\n'
        ? (k: number) => (text[k] === '\n' ? 1 : 0)
        : o.multiLine && newline === '\r\n'
          ? (k: number) => (text[k] === '\n' ? 1 : text[k] === '\r' && text[k + 1] === '\n' ? 2 : 0)
          : (k: number) => (text[k] === '\r' ? (text[k + 1] === '\n' ? 2 : 1) : text[k] === '\n' ? 1 : 0);
  // a blank (Java's trim drops it) that does not end the line
  const isBlank = (k: number) => k < n && text[k] <= ' ' && eolAt(k) === 0;
  // the separator may be several characters (Spark 3+: univocity's multi-character delimiter)
  const sepChar = o.sep;
  const atSep = sepChar.length === 1 ? (k: number) => text[k] === sepChar : (k: number) => text.startsWith(sepChar, k);
  const scan: QuotedScan = {
    text,
    quote: o.quote,
    escape: o.escape,
    escapeEscape: o.escapeEscape ?? (o.escape === o.quote ? '' : o.escape),
    atEnd: (k) => k >= n || (!o.multiLine && eolAt(k) > 0),
    atNewline: (k) => o.multiLine && eolAt(k) > 0,
    atSep,
    // in multiLine, a lineSep inside quotes is data as it is, the file's detected line separator reads as \n
    dataAt: (k) => {
      if (o.multiLine && lineSep !== null && eolAt(k) > 0) return [lineSep, lineSep.length];
      if (o.multiLine && newline !== '\n' && text.startsWith(newline, k)) return ['\n', newline.length];
      return [text[k], 1];
    },
  };
  /** the lines that [from, to) ends (newlines inside quotes too) */
  const linesIn = (from: number, to: number): number => {
    let count = 0;
    for (let j = from; j < to; ) {
      const len = eolAt(j);
      if (len > 0) count++;
      j += len || 1;
    }
    return count;
  };
  let i = 0;
  let line = 1;
  while (i < n) {
    // a blank line (only blanks) is no record, nor is a line starting with the comment character
    // (with multiLine, univocity reads a line of blanks as a record of one value, unless ignoreLeadingWhiteSpace skips them)
    let j = i;
    if (!o.multiLine || o.ignoreLeading) while (isBlank(j)) j++;
    if (j >= n) return;
    if (eolAt(j) > 0 || (o.comment !== null && text[i] === o.comment)) {
      while (j < n && eolAt(j) === 0) j++;
      i = j + eolAt(j);
      line++;
      continue;
    }
    const start = i;
    const startLine = line;
    const fields: Field[] = [];
    for (;;) {
      // one field, from i
      let k = i;
      if (o.ignoreLeading) while (isBlank(k) && !atSep(k)) k++;
      let value = '';
      let quoted = false;
      if (k < n && text[k] === o.quote) {
        quoted = true;
        const r = quotedField(scan, k);
        value = r.value;
        k = r.end;
      } else {
        const from = k;
        while (k < n && !atSep(k) && eolAt(k) === 0) k++;
        value = text.slice(from, k);
        if (o.ignoreTrailing) {
          // (univocity's whitespace: every character up to U+0020, a \r or \n that is data too)
          let end = value.length;
          while (end > 0 && value.charCodeAt(end - 1) <= 0x20) end--;
          value = value.slice(0, end);
        }
      }
      fields.push({ text: value, quoted });
      if (k < n && atSep(k)) {
        i = k + sepChar.length;
        continue;
      }
      // end of the record
      const end = k;
      k += eolAt(k);
      line += linesIn(start, k);
      yield { line: startLine, raw: text.slice(start, end), fields };
      i = k;
      break;
    }
  }
}

/** A CSV file's text as chunks of rows (every column of `schema`, by position) and dead letters. */
export function* decodeCsv(schema: Schema, o: CsvOptions, file: string, text: string, bytes: number, keep?: readonly string[]): Generator<ReadResult> {
  const cols: readonly Column[] = schema.columns;
  const out = new ChunkBuilder(bytes);
  let first = true;
  for (const rec of csvRecords(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, o)) {
    const dead = (reason: string) => out.dead({ source: { file, line: rec.line }, raw: rec.raw, reason });
    if (first && o.header) {
      first = false;
      const differs = o.enforceSchema ? null : headerDiffers(rec, cols, o);
      if (differs !== null) {
        // Spark fails the query (the header does not conform to the schema): the file is refused
        dead(differs); // the first record: no row before it
        yield out.take();
        return;
      }
      continue;
    }
    first = false;
    const row: Row = {};
    let reason: string | null = null;
    if (rec.fields.length !== cols.length) {
      reason = `the record has ${rec.fields.length} field(s) separated by ${JSON.stringify(o.sep)}, the schema ${cols.length} column(s) (${cols.map((c) => c.name).join(', ')}): fix the record at the producer, or the schema or the sep option`;
    } else {
      for (let c = 0; c < cols.length; c++) {
        const token = tokenOf(rec.fields[c], o);
        if (token === o.nullValue) {
          row[cols[c].name] = null;
          continue;
        }
        try {
          row[cols[c].name] = valueOfText(cols[c], token, o.patterns);
        } catch (e) {
          if (!(e instanceof BadText)) throw e;
          reason = e.reason;
          break;
        }
      }
    }
    if (reason === null) out.rows.push(keep ? keepOnly(row, keep) : row);
    else {
      const before = dead(reason);
      if (before !== null) yield before;
    }
    const full = out.full();
    if (full !== null) yield full;
  }
  yield out.take();
}

/** A field as univocity hands it to Spark: an empty field is nullValue unquoted, emptyValue quoted. */
export function tokenOf(f: Field, o: CsvOptions): string {
  if (f.text !== '') return f.text;
  return f.quoted ? o.emptyValue : o.nullValue;
}

/**
 * Why a header does not conform to the schema (Spark's CSVHeaderChecker with enforceSchema false:
 * as many names as columns, each the column's name ignoring case); null when it does.
 */
function headerDiffers(rec: CsvRecord, cols: readonly Column[], o: CsvOptions): string | null {
  const names = rec.fields.map((f) => tokenOf(f, o));
  const fix = "rename the file's columns, or fix the schema (or leave enforceSchema at true to take columns by position)";
  if (names.length !== cols.length) {
    return `the CSV header has ${names.length} name(s), the schema ${cols.length} column(s) (enforceSchema is false): ${fix}`;
  }
  const i = names.findIndex((n, k) => n.toLowerCase() !== cols[k].name.toLowerCase());
  if (i < 0) return null;
  return `the CSV header's name ${JSON.stringify(names[i])} is not the schema's column ${cols[i].name} at position ${i + 1} (enforceSchema is false): ${fix}`;
}

/** The row with only the columns the query reads (the others were still checked). */
export function keepOnly(row: Row, keep: readonly string[]): Row {
  const out: Row = {};
  for (const c of keep) if (Object.hasOwn(row, c)) out[c] = row[c];
  return out;
}
