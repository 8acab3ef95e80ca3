/**
 * CSV files as Spark's reader (univocity-parsers with CSVOptions' settings) reads them, written
 * here rather than taken from csv-parse: the rules that decide a value are univocity's, not any
 * RFC 4180 parser's, and each needs the field's quoting and the record's line:
 *
 *     columns      by position (enforceSchema); a record with another field count is a dead letter
 *     sep          `,`; several characters are one separator (`||`), `\t` a tab
 *     quote        `"`: a field is quoted when it starts with it (after leading blanks only with
 *                  ignoreLeadingWhiteSpace); the separator and (multiLine) newlines are data inside
 *     escape       `\`: escape + quote is a quote inside a quoted field; a doubled quote is one too
 *     nullValue    unset: an empty field, quoted or not, is null. Set: that text, and an unquoted
 *                  empty field, are null; a quoted "" is the empty string
 *     header       each file's first record is dropped (not checked against the schema)
 *     blank lines  skipped; the line of a record is where it starts
 *     multiLine    false: every line is a record (a quote left open takes the rest of its line)
 *     ignoreLeadingWhiteSpace, ignoreTrailingWhiteSpace: blanks around unquoted values dropped
 *
 * Every declared column is converted on every record (text-values.ts): a value that does not fit
 * makes the record a dead letter with its file and line, never a row with a null.
 */
import { InvalidOptionError } from '../errors';
import type { DeadLetter, ReadResult, Row } from '../ports';
import type { Column, Schema } from '../schema';
import { CHUNK_LINES } from '../lines';
import { boolOption, charOption, patternOption, type ReaderOptions } from './options';
import { BadText, type TextPatterns, valueOfText } from './text-values';

export interface CsvOptions {
  readonly header: boolean;
  readonly sep: string;
  readonly quote: string;
  readonly escape: string;
  readonly nullValue: string | null;
  readonly multiLine: boolean;
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
    quote: charOption(options, 'quote', '"'),
    escape: charOption(options, 'escape', '\\'),
    nullValue: options.nullValue === undefined || String(options.nullValue) === '' ? null : String(options.nullValue),
    multiLine: boolOption(options, 'multiLine', false),
    ignoreLeading: boolOption(options, 'ignoreLeadingWhiteSpace', false),
    ignoreTrailing: boolOption(options, 'ignoreTrailingWhiteSpace', false),
    patterns: { date: patternOption(options, 'dateFormat'), timestamp: patternOption(options, 'timestampFormat') },
  };
  if (o.sep === o.quote || o.sep.includes('\n') || o.sep.includes('\r')) {
    throw new InvalidOptionError(`option sep=${JSON.stringify(o.sep)} cannot be the quote or a newline: choose another separator, e.g. .option('sep', ';')`);
  }
  return o;
}

/**
 * Spark's sep (CSVExprUtils.toDelimiterStr): one or more characters, each either itself or a
 * backslash escape (\t \r \b \f \" \' \\); a lone backslash or another escape is refused.
 */
function delimiterOption(text: string): string {
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
 * lineSep is set): the first run of one or two line-break characters (\n, \r, \r\n or \n\r; a
 * doubled one is one). Inside a quoted value it reads as \n.
 */
function lineSeparatorOf(text: string): string {
  const at = text.search(/[\r\n]/);
  if (at < 0) return '\n';
  const a = text[at];
  const b = text[at + 1];
  return (b === '\r' || b === '\n') && b !== a ? a + b : a;
}

interface Field {
  readonly text: string;
  readonly quoted: boolean;
}

interface CsvRecord {
  readonly line: number;
  readonly raw: string;
  readonly fields: Field[];
}

const isBlank = (c: string): boolean => c !== '' && c <= ' ' && c !== '\n' && c !== '\r';

/** The records of a file's text, with the line each starts on; blank lines skipped. */
function* csvRecords(text: string, o: CsvOptions): Generator<CsvRecord> {
  const newline = o.multiLine ? lineSeparatorOf(text) : '\n';
  const n = text.length;
  // the separator may be several characters (Spark 3+: univocity's multi-character delimiter)
  const sepChar = o.sep;
  const atSep = sepChar.length === 1 ? (k: number) => text[k] === sepChar : (k: number) => text.startsWith(sepChar, k);
  let i = 0;
  let line = 1;
  while (i < n) {
    // a blank line (only spaces and tabs) is no record
    let j = i;
    while (j < n && isBlank(text[j])) j++;
    if (j >= n) return;
    if (text[j] === '\n' || text[j] === '\r') {
      i = text[j] === '\r' && text[j + 1] === '\n' ? j + 2 : j + 1;
      line++;
      continue;
    }
    const start = i;
    const startLine = line;
    const fields: Field[] = [];
    for (;;) {
      // one field, from i
      let k = i;
      if (o.ignoreLeading) while (k < n && isBlank(text[k]) && !atSep(k)) k++;
      let value = '';
      let quoted = false;
      if (k < n && text[k] === o.quote) {
        quoted = true;
        k++;
        for (;;) {
          if (k >= n) break;
          const c = text[k];
          if (c === o.escape && o.escape !== o.quote && text[k + 1] === o.quote) {
            value += o.quote;
            k += 2;
          } else if (c === o.quote) {
            if (text[k + 1] === o.quote) {
              value += o.quote;
              k += 2;
              continue;
            }
            k++;
            break;
          } else if ((c === '\n' || c === '\r') && !o.multiLine) break;
          else if (newline !== '\n' && text.startsWith(newline, k)) {
            // the file's line separator inside quotes reads as \n (univocity's normalizeLineEndingsWithinQuotes)
            line++;
            value += '\n';
            k += newline.length;
          } else {
            if (c === '\n') line++;
            else if (c === '\r' && text[k + 1] !== '\n') line++;
            value += c;
            k++;
          }
        }
        // after the closing quote: blanks skipped, anything else up to the separator kept (STOP_AT_DELIMITER)
        while (k < n && isBlank(text[k]) && !atSep(k)) k++;
        let tail = '';
        while (k < n && !atSep(k) && text[k] !== '\n' && text[k] !== '\r') tail += text[k++];
        value += tail;
      } else {
        const from = k;
        while (k < n && !atSep(k) && text[k] !== '\n' && text[k] !== '\r') k++;
        value = text.slice(from, k);
        if (o.ignoreTrailing) value = value.replace(/[\t\f\v ]+$/, '');
      }
      fields.push({ text: value, quoted });
      if (k < n && atSep(k)) {
        i = k + sepChar.length;
        continue;
      }
      // end of the record
      const end = k;
      if (k < n && text[k] === '\r') k = text[k + 1] === '\n' ? k + 2 : k + 1;
      else if (k < n && text[k] === '\n') k++;
      if (k > end) line++;
      yield { line: startLine, raw: text.slice(start, end), fields };
      i = k;
      break;
    }
  }
}

/** A CSV file's text as chunks of rows (every column of `schema`, by position) and dead letters. */
export function* decodeCsv(schema: Schema, o: CsvOptions, file: string, text: string, bytes: number, keep?: readonly string[]): Generator<ReadResult> {
  const cols: readonly Column[] = schema.columns;
  let rows: Row[] = [];
  let deadLetters: DeadLetter[] = [];
  let pending = bytes;
  let first = true;
  for (const rec of csvRecords(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, o)) {
    if (first && o.header) {
      first = false;
      continue;
    }
    first = false;
    const dead = (reason: string) => deadLetters.push({ source: { file, line: rec.line }, raw: rec.raw, reason });
    if (rec.fields.length !== cols.length) {
      dead(
        `the record has ${rec.fields.length} field(s) separated by ${JSON.stringify(o.sep)}, the schema ${cols.length} column(s) (${cols.map((c) => c.name).join(', ')}): fix the record at the producer, or the schema or the sep option`,
      );
    } else {
      const row: Row = {};
      let reason: string | null = null;
      for (let c = 0; c < cols.length; c++) {
        const f = rec.fields[c];
        const isNull = o.nullValue === null ? f.text === '' : f.text === o.nullValue || (f.text === '' && !f.quoted);
        if (isNull) {
          row[cols[c].name] = null;
          continue;
        }
        try {
          row[cols[c].name] = valueOfText(cols[c], f.text, o.patterns);
        } catch (e) {
          if (!(e instanceof BadText)) throw e;
          reason = e.reason;
          break;
        }
      }
      if (reason !== null) dead(reason);
      else rows.push(keep ? keepOnly(row, keep) : row);
    }
    if (rows.length + deadLetters.length >= CHUNK_LINES) {
      yield { rows, deadLetters, bytes: pending };
      pending = 0;
      rows = [];
      deadLetters = [];
    }
  }
  yield { rows, deadLetters, bytes: pending };
}

/** The row with only the columns the query reads (the others were still checked). */
export function keepOnly(row: Row, keep: readonly string[]): Row {
  const out: Row = {};
  for (const c of keep) if (Object.hasOwn(row, c)) out[c] = row[c];
  return out;
}
