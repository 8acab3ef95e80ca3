/**
 * Property tests of the CSV reader (lib/engine/formats/csv.ts, csv-quoted.ts) and writer
 * (csv-writer.ts: to_csv and the CSV sink), against a model of Spark's univocity settings:
 *
 * - round trip: rows of strings written by the writer and read back by the reader with matching
 *   options are the same rows, except where Spark's own writer and reader do not round-trip (each
 *   exception is in `expectedValue` and `expectedRows`, with why);
 * - the reader's output does not depend on how the records are cut into files, nor on the line
 *   ends of a file without multiLine, nor on the chunks it yields its rows in.
 *
 * The seed is fixed (SLUICE_PROPERTY_SEED overrides it, SLUICE_PROPERTY_RUNS the runs) so that CI
 * is reproducible.
 */
import fc from 'fast-check';
import { type FileDecoder, fileDecoder } from '../../lib/engine/formats';
import { csvRecordText, csvWriteOptionsOf } from '../../lib/engine/formats/csv-writer';
import type { ReaderOptions } from '../../lib/engine/formats/options';
import type { DeadLetter, ReadResult, Row } from '../../lib/engine/ports';
import { parseSchema } from '../../lib/engine/schema';

const SEED = Number(process.env.SLUICE_PROPERTY_SEED ?? 20261206);
const RUNS = Number(process.env.SLUICE_PROPERTY_RUNS ?? 300);
const check = <T>(property: fc.IProperty<T>, runs = RUNS) => fc.assert(property, { seed: SEED, numRuns: runs });

/** What the reader makes of a file: its rows and dead letters, in order, and the chunks they came in. */
function read(ddl: string, options: ReaderOptions, text: string, file = 'f.csv'): { rows: Row[]; deadLetters: DeadLetter[]; chunks: number } {
  return readWith(fileDecoder(parseSchema(ddl), 'csv', options), text, file);
}

function readWith(decoder: FileDecoder, text: string, file = 'f.csv'): { rows: Row[]; deadLetters: DeadLetter[]; chunks: number } {
  const rows: Row[] = [];
  const deadLetters: DeadLetter[] = [];
  let chunks = 0;
  for (const r of decoder.decodeText(file, text) as Iterable<ReadResult>) {
    rows.push(...r.rows);
    deadLetters.push(...r.deadLetters);
    chunks++;
  }
  return { rows, deadLetters, chunks };
}

// ---------------------------------------------------------------------------------------------
// Round trip: the writer's text read back
// ---------------------------------------------------------------------------------------------

interface Setting {
  readonly sep: string;
  readonly quote: string;
  readonly escape: string;
  readonly nullValue: string;
  /** the reader's emptyValue: what a quoted empty field reads as ("" unless set) */
  readonly emptyValue: string;
  /** the writer's lineSep: what ends its records */
  readonly lineSep: string;
  readonly quoteAll: boolean;
  readonly escapeQuotes: boolean;
  /** the writer's ignoreLeadingWhiteSpace and ignoreTrailingWhiteSpace (Spark's default for writing: true) */
  readonly trim: boolean;
  readonly header: boolean;
  /** the reader's multiLine, and whether it is given the writer's lineSep (else it finds lines itself) */
  readonly multiLine: boolean;
  readonly readerLineSep: boolean;
}

const setting: fc.Arbitrary<Setting> = fc
  .record({
    sep: fc.constantFrom(',', ';', '\t', 'é', '||', '::'),
    quote: fc.constantFrom('"', "'"),
    escapeKind: fc.constantFrom('backslash', 'quote', 'caret'),
    nullValue: fc.constantFrom('', '', 'NULL', '\\N'),
    emptyValue: fc.constantFrom('', '', 'E', 'NULL'),
    lineSep: fc.constantFrom('\n', '\n', '\r\n', '\r', '|'),
    quoteAll: fc.boolean(),
    escapeQuotes: fc.boolean(),
    trim: fc.boolean(),
    header: fc.boolean(),
    multiLine: fc.boolean(),
    readerLineSep: fc.boolean(),
  })
  // (a separator holding a character of lineSep is ambiguous: univocity ends the line first, Hadoop's lines too)
  .filter((s) => ![...s.lineSep].some((c) => s.sep.includes(c)))
  .map(({ escapeKind, ...s }) => ({
    ...s,
    escape: escapeKind === 'backslash' ? '\\' : escapeKind === 'quote' ? s.quote : '^',
    // a reader that is not given lineSep finds only \n, \r and \r\n line ends
    readerLineSep: s.readerLineSep || s.lineSep === '|',
  }));

/** The pieces values are made of: separators' characters, quotes, escapes, blanks, line ends, the comment character, non-ASCII. */
const PIECES = [
  'a',
  'b',
  'Z',
  '0',
  ' ',
  '  ',
  '\t',
  ',',
  ';',
  'é',
  '|',
  '||',
  ':',
  '::',
  '"',
  "'",
  '\\',
  '^',
  '#',
  '\n',
  '\r',
  '\r\n',
  '\n\r',
  '日本',
  '😀',
  'NULL',
  '\\N',
];

/**
 * Values for a setting. With a separator of several characters, its characters come only as the
 * whole separator: univocity's writer quotes a value that holds the separator, not one that ends
 * with its first character ("x|" then "||" writes x|||, which its reader, as Spark's, reads as
 * "x" then "|"), so such values do not round-trip in Spark either.
 */
function valuesFor(s: Setting): fc.Arbitrary<string | null> {
  const pieces = s.sep.length > 1 ? PIECES.filter((p) => p === s.sep || ![...s.sep].some((c) => p.includes(c))) : PIECES;
  return fc.option(
    fc.array(fc.constantFrom(...pieces), { maxLength: 6 }).map((ps) => ps.join('')),
    { freq: 6 },
  );
}

const isBlank = (c: string) => c <= ' ';
/** The value without its leading and (or) trailing characters up to U+0020 (univocity's whitespace, Java's trim). */
function trimmed(v: string, leading = true, trailing = true): string {
  let a = 0;
  let b = v.length;
  while (leading && a < b && isBlank(v[a])) a++;
  while (trailing && b > a && isBlank(v[b - 1])) b--;
  return v.slice(a, b);
}

/** univocity's LineSeparatorDetector: the first line break of the text, \r\n when \r is followed by \n (a \n stays \n). */
function detectedLineSeparator(text: string): string {
  const at = text.search(/[\r\n]/);
  if (at < 0) return '\n';
  return text[at] === '\r' && text[at + 1] === '\n' ? '\r\n' : text[at];
}

/** The text of a value once the reader normalizes the line separator `detected` inside quotes to \n. */
function normalized(v: string, detected: string): string {
  return detected === '\n' ? v : v.split(detected).join('\n');
}

/**
 * The value the reader gives back for `v` written with `s`, or null. Spark's own exceptions:
 * - the writer drops leading and trailing blanks (ignoreLeading/TrailingWhiteSpace default true
 *   for writing), inside quotes too, and a value of blanks is then the empty string;
 * - the empty string is written as `""` and a quoted empty field reads as emptyValue (""), which is
 *   null when nullValue is the same (both "" by default): "" round-trips only with another nullValue,
 *   and only with the quote `"` (emptyValue's `""` is the same text whatever the quote);
 * - a value equal to nullValue reads as null (the reader compares the unquoted token), and with
 *   quoteAll a null written as an empty nullValue is a quoted empty field, emptyValue when read;
 * - a \n inside quotes is written as the writer's lineSep when that has two characters
 *   (univocity's WriterCharAppender writes its normalized newline as the line separator); the
 *   reader keeps line ends inside quotes as they are when lineSep is given with multiLine (Spark
 *   sets normalizeLineEndingsWithinQuotes to !multiLine), and turns the line separator it
 *   detects into \n when lineSep is not given.
 */
function expectedValue(v: string | null, s: Setting, detected: string): string | null {
  if (v === null) {
    // quoteAll quotes nulls too (univocity's quoteNulls): an empty nullValue is then a quoted empty field
    const token = s.quoteAll && s.nullValue === '' ? s.emptyValue : s.nullValue;
    return token === s.nullValue ? null : token;
  }
  let w = s.trim ? trimmed(v) : v;
  if (w === '') {
    // the writer's emptyValue is `""` with double quotes whatever the quote: with another quote it is
    // two characters of text, not a quoted empty field
    const token = s.quote === '"' ? s.emptyValue : '""';
    return token === s.nullValue ? null : token;
  }
  if (s.lineSep.length === 2) w = w.split('\n').join(s.lineSep);
  if (s.multiLine && !s.readerLineSep) w = normalized(w, detected);
  return w === s.nullValue ? null : w;
}

function readerOptions(s: Setting): ReaderOptions {
  return {
    sep: s.sep,
    quote: s.quote,
    escape: s.escape,
    nullValue: s.nullValue,
    emptyValue: s.emptyValue,
    header: s.header,
    multiLine: s.multiLine,
    ...(s.readerLineSep ? { lineSep: s.lineSep } : {}),
  };
}

function writerOptions(s: Setting): ReaderOptions {
  return {
    sep: s.sep,
    quote: s.quote,
    escape: s.escape,
    nullValue: s.nullValue,
    lineSep: s.lineSep,
    quoteAll: s.quoteAll,
    escapeQuotes: s.escapeQuotes,
    ignoreLeadingWhiteSpace: s.trim,
    ignoreTrailingWhiteSpace: s.trim,
  };
}

const table = fc.tuple(setting, fc.integer({ min: 1, max: 3 })).chain(([s, width]) =>
  fc.record({
    s: fc.constant(s),
    width: fc.constant(width),
    rows: fc.array(fc.array(valuesFor(s), { minLength: width, maxLength: width }), { maxLength: 6 }),
  }),
);

describe('CSV written by the writer reads back as the same rows', () => {
  it("round trips, except where Spark's writer and reader do not", () => {
    check(
      fc.property(table, ({ s, width, rows }) => {
        const names = Array.from({ length: width }, (_, i) => `c${i}`);
        const w = csvWriteOptionsOf(writerOptions(s));
        const records = [...(s.header ? [csvRecordText(names, w)] : []), ...rows.map((r) => csvRecordText(r, w))];
        const text = records.map((r) => `${r}${s.lineSep}`).join('');
        const breaks = (v: string | null) => v !== null && /[\r\n]/.test(s.trim ? trimmed(v) : v);
        if (!s.multiLine) {
          // without multiLine a record is a line: values with line ends (or the lineSep) are for multiLine
          fc.pre(!rows.some((r) => r.some((v) => breaks(v) || (v !== null && [...s.lineSep].some((c) => v.includes(c))))));
        }
        const detected = detectedLineSeparator(text);
        if (s.multiLine && !s.readerLineSep) {
          // the writer's record ends must read as line ends under the separator univocity detects
          // (a first break inside a value, \r\n in "x\r\n", makes a lone \r record end data in Spark too)
          fc.pre(/^\n+$/.test(normalized(s.lineSep, detected)));
        }
        if (s.multiLine && s.readerLineSep && s.lineSep.length === 2) {
          // with a two-character lineSep univocity's newline is still \n, which ends a record anywhere
          // outside quotes; the writer writes none there (a \n in a value is quoted, as lineSep)
        }
        const expected = rows
          .filter((r) => {
            // a line of blanks is no record: Spark drops lines that trim to nothing (and univocity
            // skips empty lines with multiLine), so a row written as one (one null, or nulls between
            // tabs) is lost
            const line = csvRecordText(r, w);
            return s.multiLine ? line !== '' : trimmed(line) !== '';
          })
          .map((r) => Object.fromEntries(r.map((v, i) => [`c${i}`, expectedValue(v, s, detected)])));
        const got = read(names.map((n) => `${n} STRING`).join(', '), readerOptions(s), text);
        expect(got.deadLetters).toEqual([]);
        expect(got.rows).toEqual(expected);
      }),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// The reader alone: files cut differently, other line ends, chunks
// ---------------------------------------------------------------------------------------------

/** A record's text: fields of plain text, quoted text (with escaped quotes, separators, blanks), or junk for the INT column. */
const field = fc.oneof(
  fc.stringMatching(/^[a-z0-9 ]{0,5}$/),
  fc.stringMatching(/^[a-z,"\\ ]{0,6}$/).map((v) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`),
  fc.constantFrom('', '""', '"a""b"', '"x" ', ' "y"', 'NaN', '"unclosed'),
);
const intField = fc.oneof(fc.integer({ min: -1000, max: 1000 }).map(String), fc.constantFrom('', 'x', '1.5', '99999999999'));
const filled = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(field, intField, field).map((fs) => fs.join(',')) },
  // a field too few or too many: a dead letter
  { weight: 1, arbitrary: fc.tuple(field, intField).map((fs) => fs.join(',')) },
  { weight: 1, arbitrary: fc.tuple(field, intField, field, field).map((fs) => fs.join(',')) },
);
// and a blank line, or one of spaces: no record
const record = fc.oneof({ weight: 10, arbitrary: filled }, { weight: 1, arbitrary: fc.constantFrom('', '   ') });
const SCHEMA = 'a STRING, n INT, b STRING';

describe('the CSV reader', () => {
  /** Plain fields (no quotes) with blanks, commas and line breaks anywhere: the reference splits lines, then fields. */
  const plainText = fc.array(fc.constantFrom('a', 'b', ',', ' ', '\t', '\u0001', '\r', '\n', '\r\n', '\n\r'), { maxLength: 30 }).map((ps) => ps.join(''));

  /** The reader's ignoreLeadingWhiteSpace and ignoreTrailingWhiteSpace (false unless set). */
  const blanks = fc.record({ leading: fc.boolean(), trailing: fc.boolean() });

  /**
   * Rows and the raw text of dead letters, as Spark reads plain fields into `a STRING, b STRING`:
   * each field without its leading or trailing characters up to U+0020 when the option says so
   * (univocity's whitespace), an empty one null.
   */
  function plainReference(lines: readonly string[], o: { leading: boolean; trailing: boolean }): { rows: Row[]; raws: string[] } {
    const rows: Row[] = [];
    const raws: string[] = [];
    const value = (f: string) => {
      const v = trimmed(f, o.leading, o.trailing);
      return v === '' ? null : v;
    };
    for (const line of lines) {
      const fields = line.split(',');
      if (fields.length === 2) rows.push({ a: value(fields[0]), b: value(fields[1]) });
      else raws.push(line);
    }
    return { rows, raws };
  }

  const options = (o: { leading: boolean; trailing: boolean }, multiLine: boolean): ReaderOptions => ({
    ignoreLeadingWhiteSpace: o.leading,
    ignoreTrailingWhiteSpace: o.trailing,
    multiLine,
  });

  it('without multiLine, ends lines at \n, \r and \r\n and drops the lines that trim to nothing', () => {
    check(
      fc.property(plainText, blanks, (text, o) => {
        const expected = plainReference(
          text.split(/\r\n|\r|\n/).filter((l) => trimmed(l) !== ''),
          o,
        );
        const got = read('a STRING, b STRING', options(o, false), text);
        expect(got.rows).toEqual(expected.rows);
        expect(got.deadLetters.map((d) => d.raw)).toEqual(expected.raws);
      }),
    );
  });

  it('with multiLine, ends records at the line separator univocity detects and at \n, a lone \r otherwise data', () => {
    check(
      fc.property(plainText, blanks, (text, o) => {
        // the normalized newline (\n) ends a record, and so does the detected separator; empty lines are
        // skipped, and so are lines of blanks when leading blanks are dropped
        const detected = detectedLineSeparator(text);
        const split = detected === '\n' ? /\n/ : detected === '\r\n' ? /\r\n|\n/ : /\r|\n/;
        const expected = plainReference(
          text.split(split).filter((l) => (o.leading ? trimmed(l) : l) !== ''),
          o,
        );
        const got = read('a STRING, b STRING', options(o, true), text);
        expect(got.rows).toEqual(expected.rows);
        expect(got.deadLetters.map((d) => d.raw)).toEqual(expected.raws);
      }),
    );
  });

  it('reads the records of one file as it reads them cut into several files', () => {
    check(
      fc.property(fc.array(record, { maxLength: 30 }), fc.array(fc.nat(), { maxLength: 4 }), fc.boolean(), (records, cuts, crlf) => {
        const end = crlf ? '\r\n' : '\n';
        const whole = read(SCHEMA, {}, records.map((r) => r + end).join(''));
        const at = [...new Set(cuts.map((c) => c % (records.length + 1)))].sort((x, y) => x - y);
        const parts = [0, ...at, records.length].slice(1).map((to, i, all) => records.slice(i === 0 ? 0 : all[i - 1], to));
        const pieces = parts.filter((p) => p.length > 0).map((p, i) => read(SCHEMA, {}, p.map((r) => r + end).join(''), `f${i}.csv`));
        expect(pieces.flatMap((p) => p.rows)).toEqual(whole.rows);
        // the same dead letters, with the same raw text and reason (their lines count from each file's start)
        const letter = (d: DeadLetter) => ({ raw: d.raw, reason: d.reason });
        expect(pieces.flatMap((p) => p.deadLetters.map(letter))).toEqual(whole.deadLetters.map(letter));
      }),
    );
  });

  it('reads \\n, \\r\\n and \\r line ends alike without multiLine, lines numbered the same', () => {
    check(
      fc.property(fc.array(record, { maxLength: 30 }), fc.constantFrom('\r\n', '\r'), fc.boolean(), (records, end, last) => {
        const text = (e: string) => records.map((r) => r + e).join('') + (last ? '' : 'tail,1,x');
        const lf = read(SCHEMA, {}, text('\n'));
        const other = read(SCHEMA, {}, text(end));
        expect(other.rows).toEqual(lf.rows);
        expect(other.deadLetters.map((d) => [d.source.line, d.raw, d.reason])).toEqual(lf.deadLetters.map((d) => [d.source.line, d.raw, d.reason]));
      }),
    );
  });

  it('yields rows in chunks that together are the rows of the file, in order, across chunk boundaries', () => {
    const decoder = fileDecoder(parseSchema(SCHEMA), 'csv', {});
    check(
      fc.property(fc.array(filled, { minLength: 520, maxLength: 800 }), (records) => {
        const all = readWith(decoder, records.map((r) => `${r}\n`).join(''));
        expect(all.chunks).toBeGreaterThan(1);
        // one record at a time gives each record's outcome: the chunks lose, repeat or reorder none
        const one = records.map((r) => readWith(decoder, `${r}\n`));
        expect(all.rows).toEqual(one.flatMap((o) => o.rows));
        expect(all.deadLetters.map((d) => d.raw)).toEqual(one.flatMap((o) => o.deadLetters.map((d) => d.raw)));
        expect(all.deadLetters.map((d) => d.source.line)).toEqual(one.flatMap((o, i) => o.deadLetters.map(() => i + 1)));
      }),
      Math.max(3, Math.floor(RUNS / 60)),
    );
  });
});

describe('the counterexamples the properties found, pinned', () => {
  it('writes a \\n inside quotes as a lineSep of two characters, as univocity writes its newline', () => {
    expect(csvRecordText(['x\ny', 'z'], csvWriteOptionsOf({ lineSep: '\r\n' }))).toBe('"x\r\ny",z');
    // (the shrunk round trip: "a\r\na" is written "a\r\r\na", and read back as it is with lineSep and multiLine)
    const written = csvRecordText(['a\r\na'], csvWriteOptionsOf({ lineSep: '\r\n' }));
    expect(written).toBe('"a\r\r\na"');
    expect(read('c STRING', { lineSep: '\r\n', multiLine: true }, `${written}\r\n`).rows).toEqual([{ c: 'a\r\r\na' }]);
    // a one-character lineSep is univocity's newline itself: a \n stays
    expect(csvRecordText(['x\ny'], csvWriteOptionsOf({ lineSep: '|' }))).toBe('"x\ny"');
    expect(csvRecordText(['x\ny'], csvWriteOptionsOf({}))).toBe('"x\ny"');
  });

  it("detects a multiLine file's line separator as univocity does: \\n followed by \\r is \\n", () => {
    // the first line break is the \n of "\n\r" inside the quotes: the \r after it is data
    expect(read('a STRING, b STRING', { sep: ';', quote: "'", multiLine: true }, "'\n\r';\n").rows).toEqual([{ a: '\n\r', b: null }]);
  });

  it('drops trailing characters up to U+0020 with ignoreTrailingWhiteSpace, as univocity does', () => {
    expect(read('a STRING, b STRING', { ignoreTrailingWhiteSpace: true }, 'a\u0001,b\n').rows).toEqual([{ a: 'a', b: 'b' }]);
  });

  it('reads a lone \\r outside quotes as data with multiLine when the line separator is \\n', () => {
    expect(read('a STRING, b STRING', { multiLine: true }, 'a,b\nc\r,d\n').rows).toEqual([
      { a: 'a', b: 'b' },
      { a: 'c\r', b: 'd' },
    ]);
    // "\n\r\n": the separator is \n, so the \r is a record of one value (the schema's two columns make it a dead letter)
    const r = read('a STRING, b STRING', { multiLine: true }, '\n\r\n');
    expect(r.rows).toEqual([]);
    expect(r.deadLetters.map((d) => d.raw)).toEqual(['\r']);
    // and a \r\n in a file of \n lines leaves its \r to the value before it
    expect(read('a STRING, b STRING', { multiLine: true }, 'a,b\nc,d\r\n').rows).toEqual([
      { a: 'a', b: 'b' },
      { a: 'c', b: 'd\r' },
    ]);
  });
});
