/**
 * One CSV record as Spark writes it (UnivocityGenerator over univocity's CsvWriter with the
 * settings of CSVOptions.asWriterSettings), for to_csv: written here, as the reader is (csv.ts),
 * because the rules that decide a field's text are univocity's:
 *
 *     null         nullValue ("" unless set); "" emptyValue (`""` unless set), and so is a value
 *                  of only blanks when leading blanks are dropped; each written as any value
 *                  is, except that one already in quotes is written as it is
 *     blanks       leading and trailing characters up to U+0020 dropped (ignoreLeadingWhiteSpace,
 *                  ignoreTrailingWhiteSpace: true when writing), inside quotes too
 *     quoted       when the value holds the separator, \n, \r, a character of lineSep or
 *                  (escapeQuotes, the default) the quote; when it starts with the quote; the first field when it starts with the
 *                  comment character (`#` unless set); every field with quoteAll
 *     escaped      inside quotes, the quote and the escape are preceded by the escape (`\`; the
 *                  escape by charToEscapeQuoteEscaping, itself unless set or when escape = quote),
 *                  and a \n is written as a lineSep of two characters; unquoted, a value is
 *                  written as it is
 */
import { compileSparkDatetimePattern, type DatetimePattern, DatetimePatternError } from '../datetime-patterns';
import { ddlOf } from '../ddl';
import { javaDecimalText } from '../decimal';
import { InvalidOptionError } from '../errors';
import { type Micros, microsOfDate } from '../expr/time';
import { javaDoubleText } from '../expr/values';
import { commentOption, delimiterOption, escapeEscapeOption, lineSepOption, quoteCharOption } from './csv';
import { boolOption, type ReaderOptions } from './options';
import type { OutputColumnType } from '../ports';

export interface CsvWriteOptions {
  readonly sep: string;
  readonly quote: string;
  readonly escape: string;
  /** what escapes the escape inside quotes ('' for nothing) */
  readonly escapeEscape: string;
  readonly nullValue: string;
  readonly emptyValue: string;
  readonly comment: string;
  readonly quoteAll: boolean;
  readonly escapeQuotes: boolean;
  readonly ignoreLeading: boolean;
  readonly ignoreTrailing: boolean;
  /** what ends a record in a file (`\n` unless set: one character, or two such as `\r\n`); its characters also make a value quoted */
  readonly lineSep: string;
}

/** Spark's CSV writer settings with no option given (CSVOptions' defaults for writing). */
const SPARK_CSV_WRITE: CsvWriteOptions = {
  sep: ',',
  quote: '"',
  escape: '\\',
  escapeEscape: '\\',
  nullValue: '',
  emptyValue: '""',
  comment: '#',
  quoteAll: false,
  escapeQuotes: true,
  ignoreLeading: true,
  ignoreTrailing: true,
  lineSep: '\n',
};

/** Spark's timestampFormat for writing CSV when none is given (`2026-10-01T12:00:00.000Z` in UTC). */
export const SPARK_CSV_TIMESTAMP = compileSparkDatetimePattern("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", 'format');

/** The writer options Spark's CSV writer takes, by name (the names as CSVOptions spells them). */
export const CSV_WRITE_OPTION_NAMES = [
  'sep',
  'delimiter',
  'quote',
  'escape',
  'charToEscapeQuoteEscaping',
  'nullValue',
  'emptyValue',
  'comment',
  'quoteAll',
  'escapeQuotes',
  'ignoreLeadingWhiteSpace',
  'ignoreTrailingWhiteSpace',
  'lineSep',
] as const;

/**
 * The writer's settings from its options (CSVOptions' names), Spark's defaults for the rest, read
 * by the reader's own rules (the same sep escapes, quote and boolean texts); a bad one throws
 * InvalidOptionError naming it and the fix.
 */
export function csvWriteOptionsOf(options: ReaderOptions): CsvWriteOptions {
  const quote = quoteCharOption(options, 'quote', SPARK_CSV_WRITE.quote);
  const escapeChar = quoteCharOption(options, 'escape', SPARK_CSV_WRITE.escape);
  const sep = options.sep ?? options.delimiter;
  const text = (k: string, fallback: string) => (options[k] === undefined ? fallback : String(options[k]));
  return {
    sep: sep === undefined ? SPARK_CSV_WRITE.sep : delimiterOption(String(sep)),
    quote,
    escape: escapeChar,
    // univocity: unset, the escape escapes itself (nothing when the escape is the quote)
    escapeEscape: escapeEscapeOption(options) ?? (quote === escapeChar ? '' : escapeChar),
    nullValue: text('nullValue', SPARK_CSV_WRITE.nullValue),
    emptyValue: text('emptyValue', SPARK_CSV_WRITE.emptyValue),
    // univocity's `#` unless set; set empty, no comment character
    comment: options.comment === undefined ? SPARK_CSV_WRITE.comment : (commentOption(options) ?? '\0'),
    quoteAll: boolOption(options, 'quoteAll', SPARK_CSV_WRITE.quoteAll),
    escapeQuotes: boolOption(options, 'escapeQuotes', SPARK_CSV_WRITE.escapeQuotes),
    ignoreLeading: boolOption(options, 'ignoreLeadingWhiteSpace', SPARK_CSV_WRITE.ignoreLeading),
    ignoreTrailing: boolOption(options, 'ignoreTrailingWhiteSpace', SPARK_CSV_WRITE.ignoreTrailing),
    lineSep: lineSepOption(options) ?? SPARK_CSV_WRITE.lineSep,
  };
}

/** The option names a CSV file sink takes (besides header): the writer's and the datetime patterns. */
export const CSV_SINK_OPTION_NAMES: readonly string[] = [...CSV_WRITE_OPTION_NAMES, 'timestampFormat', 'dateFormat'];

/** The writer settings and datetime patterns of the sink's options; a bad option throws InvalidOptionError. */
export function csvSinkFormatOf(options: Readonly<Record<string, string>> = {}): {
  writer: CsvWriteOptions;
  timestamp: DatetimePattern;
  date: DatetimePattern | null;
} {
  const unknown = Object.keys(options).find((k) => !CSV_SINK_OPTION_NAMES.includes(k));
  if (unknown !== undefined) throw new InvalidOptionError(`the CSV sink has no option ${unknown}: it takes ${CSV_SINK_OPTION_NAMES.join(', ')}`);
  const pattern = (k: string) => {
    try {
      return compileSparkDatetimePattern(options[k], 'format');
    } catch (e) {
      if (e instanceof DatetimePatternError) throw new InvalidOptionError(`option ${k}=${JSON.stringify(options[k])} is not a datetime pattern: ${e.message}`);
      throw e;
    }
  };
  return {
    writer: csvWriteOptionsOf(options),
    timestamp: options.timestampFormat === undefined ? SPARK_CSV_TIMESTAMP : pattern('timestampFormat'),
    date: options.dateFormat === undefined ? null : pattern('dateFormat'),
  };
}

/**
 * The text Spark's UnivocityGenerator makes of a value of a type (the engine's value: epoch µs for a
 * TIMESTAMP, a DECIMAL's canonical text, a DATE's `YYYY-MM-DD`): a DOUBLE or DECIMAL as Java prints
 * it, a DATE by the dateFormat (as it is without one), a TIMESTAMP by the timestampFormat.
 */
export function csvValueText(
  type: { readonly type: string; readonly binary32?: boolean },
  v: unknown,
  patterns: { readonly timestamp: DatetimePattern; readonly date: DatetimePattern | null | undefined },
): string {
  switch (type.type) {
    case 'DOUBLE':
      return javaDoubleText(v as number, type.binary32);
    case 'DECIMAL':
      return javaDecimalText(v as string);
    case 'DATE':
      return patterns.date ? patterns.date.format(microsOfDate(v as string)) : (v as string);
    case 'TIMESTAMP':
      return patterns.timestamp.format(v as Micros);
    case 'BOOLEAN':
      return v ? 'true' : 'false';
    default:
      return String(v);
  }
}

/** A character univocity's writer counts as whitespace (skipBitsAsWhitespace: every one up to U+0020). */
const blank = (c: string) => c <= ' ';

/** The record of `values` (null: a null field) as univocity's CsvWriter.processRow writes it, without a line end. */
export function csvRecordText(values: ReadonlyArray<string | null>, o: CsvWriteOptions): string {
  return values.map((v, i) => fieldText(v, i, o)).join(o.sep);
}

/** Whether `c` is one of univocity's line-end quotation triggers: \n, \r and the characters of the line separator. */
function lineEnd(c: string, o: CsvWriteOptions): boolean {
  return c === '\n' || c === '\r' || o.lineSep.includes(c);
}

/** Whether `s` from `from` holds what makes univocity quote a value: the separator, a line end or (escapeQuotes) the quote. */
function needsQuotes(s: string, from: number, o: CsvWriteOptions): boolean {
  for (let i = from; i < s.length; i++) {
    const c = s[i];
    if (lineEnd(c, o) || (o.escapeQuotes && c === o.quote) || s.startsWith(o.sep, i)) return true;
  }
  return false;
}

/**
 * `s` from `from`, its quotes and escapes escaped, as appendQuoted writes it inside quotes. A \n is
 * written as a lineSep of two characters (\r\n): univocity's normalized newline is \n unless the
 * line separator is one character (Format.setLineSeparator makes that character the newline), and
 * its WriterCharAppender writes the newline as the line separator.
 */
function quotedBody(s: string, from: number, o: CsvWriteOptions): string {
  const newline = o.lineSep.length === 2 ? o.lineSep : '\n';
  let out = '';
  for (let i = from; i < s.length; i++) {
    const c = s[i];
    if (c === o.quote) out += o.escape + c;
    else if (c === o.escape) out += o.escapeEscape + c;
    else if (c === '\n') out += newline;
    else out += c;
  }
  return out;
}

/** The trailing blanks dropped (ignoreTrailingWhiteSpace). */
function trimEnd(s: string, o: CsvWriteOptions): string {
  if (!o.ignoreTrailing) return s;
  let end = s.length;
  while (end > 0 && blank(s[end - 1])) end--;
  return s.slice(0, end);
}

function fieldText(value: string | null, column: number, o: CsvWriteOptions): string {
  // null is nullValue, and an empty value (or, with ignoreLeadingWhiteSpace, one of blanks) emptyValue,
  // each written by the rules of any value, except that one already in quotes is written as it is
  let text = value;
  let substituted = false;
  if (text === null) {
    text = o.nullValue;
    substituted = true;
  } else {
    let k = 0;
    if (o.ignoreLeading) while (k < text.length && blank(text[k])) k++;
    if (text === '' || k === text.length) {
      text = o.emptyValue;
      substituted = true;
    }
  }
  let start = 0;
  if (o.ignoreLeading) while (start < text.length && blank(text[start])) start++;
  const q = (body: string) => `${o.quote}${trimEnd(body, o)}${o.quote}`;
  if (o.quoteAll || (start < text.length && text[start] === o.quote) || (column === 0 && text !== '' && text[0] === o.comment)) {
    if (substituted && text.length >= 2 && text[0] === o.quote && text[text.length - 1] === o.quote) return text;
    return q(quotedBody(text, start, o));
  }
  // unquoted until a character that needs quotes; the quote or the escape settles it for the rest
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === o.quote || c === o.escape) {
      if (needsQuotes(text, i, o)) return q(text.slice(start, i) + quotedBody(text, i, o));
      return trimEnd(text.slice(start), o);
    }
    if (lineEnd(c, o) || text.startsWith(o.sep, i)) return q(text.slice(start, i) + quotedBody(text, i, o));
  }
  return trimEnd(text.slice(start), o);
}

/**
 * Why the CSV sink cannot write a query's output, or null: a column of a nested type (a window, an
 * ARRAY, MAP or STRUCT), which Spark's CSV datasource refuses too. The sink checks it before its
 * first write, and the CDK construct at synth when it knows the query's plan.
 */
export function csvColumnsRefusal(columns: readonly string[], types: Readonly<Record<string, OutputColumnType>>, queryName: string): string | null {
  const nested = columns.find((c) => {
    const t = types[c];
    return t === 'WINDOW' || t.type === 'ARRAY' || t.type === 'MAP' || t.type === 'STRUCT';
  });
  if (nested === undefined) return null;
  const t = types[nested];
  return `[UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE] The CSV datasource doesn't support the column \`${nested}\` of the type "${t === 'WINDOW' ? 'STRUCT<start: TIMESTAMP, end: TIMESTAMP>' : ddlOf(t)}" (query ${queryName}): select its fields as columns (window.start AS window_start), write it with to_json, or use format=json or format=parquet`;
}
